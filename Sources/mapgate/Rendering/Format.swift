import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// Dates and text as mapgate shows them: UTC, ISO 8601 in JSON.
enum Format {
    static func iso(_ date: Date) -> String { ISODate.string(date) }

    static func dateTime(_ date: Date) -> String {
        iso(date).replacing("T", with: " ").replacing("Z", with: " UTC")
    }

    /// `date` in the machine's local time (`TZ`, `/etc/localtime`), as a person reads a clock:
    /// `2027-02-05 09:00 (UTC+9)`. Numbers stay as they are in every language.
    static func localDateTime(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return dateTime(date) }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let offset = Int(parts.tm_gmtoff) / 60
        let minutes = abs(offset) % 60
        let zone = offset == 0 ? "UTC" : "UTC\(offset < 0 ? "-" : "+")\(abs(offset) / 60)" + (minutes == 0 ? "" : ":" + two(minutes))
        return "\(Int(parts.tm_year) + 1900)-\(two(Int(parts.tm_mon) + 1))-\(two(Int(parts.tm_mday))) \(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))) (\(zone))"
    }

    static func bytes(_ count: Int64) -> String {
        ByteCount.text(count)
    }
}
