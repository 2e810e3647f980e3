import FoundationEssentials

/// ISO 8601 dates as the store, catalogs and mapgate's output write them: RFC 3339's
/// `2024-11-20T13:36:18Z`, in UTC.
///
/// Read and written here with integer arithmetic on the proleptic Gregorian calendar rather than
/// through Foundation's formatters, which load ICU's calendars and time zones for it: several
/// megabytes of memory on every `sync` that reads a catalog's `expires`.
public enum ISODate {
    /// Parses `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds, then `Z` or an offset such as
    /// `+09:00`. Anything else (a space for the `T`, no zone, a 13th month, a 31st of April) is nil.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(at start: Int, digits: Int) -> Int? {
            guard start >= 0, start + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + digits)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        guard let year = number(at: 0, digits: 4), byte(4) == UInt8(ascii: "-"), let month = number(at: 5, digits: 2),
            byte(7) == UInt8(ascii: "-"), let day = number(at: 8, digits: 2), byte(10) == UInt8(ascii: "T") || byte(10) == UInt8(ascii: "t"),
            let hour = number(at: 11, digits: 2), byte(13) == UInt8(ascii: ":"), let minute = number(at: 14, digits: 2),
            byte(16) == UInt8(ascii: ":"), let second = number(at: 17, digits: 2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if byte(index) == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while let digit = byte(index), (0x30...0x39).contains(digit) {
                fraction += Double(digit - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        switch byte(index) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case let sign? where sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"):
            guard let hours = number(at: index + 1, digits: 2), byte(index + 3) == UInt8(ascii: ":"),
                let minutes = number(at: index + 4, digits: 2), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (sign == UInt8(ascii: "+") ? 1 : -1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// A date as `YYYY-MM-DD` in UTC, or `?` when unknown.
    public static func day(_ date: Date?) -> String {
        guard let date else { return "?" }
        let (year, month, day, _) = civil(date)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// A date as `2024-11-20T13:36:18Z` (whole seconds, rounded down).
    public static func string(_ date: Date) -> String {
        let (year, month, day, second) = civil(date)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(second / 3_600, 2) + ":"
            + pad(second / 60 % 60, 2) + ":" + pad(second % 60, 2) + "Z"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Year, month, day and second of the day in UTC (Hinnant's `civil_from_days`).
    static func civil(_ date: Date) -> (year: Int, month: Int, day: Int, second: Int) {
        // Years 1 to 9999 (a date from a damaged record can be anything, even not a number).
        let seconds = date.timeIntervalSince1970
        let total = Int((seconds.isFinite ? min(max(seconds, -62_135_596_800), 253_402_300_799) : 0).rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let second = total - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day, second)
    }
}
