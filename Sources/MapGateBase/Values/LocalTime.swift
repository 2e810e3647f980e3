import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A moment as a person reads a clock: in the machine's local time (`TZ`, `/etc/localtime`), to
/// the minute, with its offset from UTC, `2027-02-05 09:00 (UTC+9)`. For what people read (a
/// refusal's dates, `status`); JSON and files keep ``ISODate``. Numbers stay as they are in every
/// language.
public enum LocalTime {
    public static func text(_ date: Date) -> String {
        guard let parts = parts(date) else { return ISODate.string(date).replacing("T", with: " ").replacing("Z", with: " UTC") }
        let offset = Int(parts.tm_gmtoff) / 60
        let minutes = abs(offset) % 60
        let zone = offset == 0 ? "UTC" : "UTC\(offset < 0 ? "-" : "+")\(abs(offset) / 60)" + (minutes == 0 ? "" : ":" + two(minutes))
        return "\(day(of: parts)) \(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))) (\(zone))"
    }

    /// The local day, `YYYY-MM-DD`.
    public static func day(_ date: Date) -> String {
        parts(date).map(day(of:)) ?? ISODate.day(date)
    }

    private static func parts(_ date: Date) -> tm? {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        return localtime_r(&seconds, &parts) != nil ? parts : nil
    }

    private static func day(of parts: tm) -> String {
        "\(Int(parts.tm_year) + 1900)-\(two(Int(parts.tm_mon) + 1))-\(two(Int(parts.tm_mday)))"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
