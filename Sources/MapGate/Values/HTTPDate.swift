import FoundationEssentials

/// HTTP's date format (RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`), always in GMT.
///
/// Read and written with ``ISODate``'s calendar arithmetic, as `DateFormatter` with the
/// `en_US_POSIX` locale and `EEE, dd MMM yyyy HH:mm:ss 'GMT'` did: English day and month
/// names; the day name is read but not checked against the date; a day of one or two digits.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func parse(_ text: String) -> Date? {
        let fields = text.trimmingWhitespace().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())),
            (1...2).contains(fields[1].count), fields[1].allSatisfy(\.isASCIIDigit), let day = Int(fields[1]),
            let monthIndex = months.firstIndex(of: String(fields[2])), fields[3].count == 4, fields[3].allSatisfy(\.isASCIIDigit),
            let year = Int(fields[3]), fields[5] == "GMT"
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second < 60, day >= 1, day <= ISODate.daysIn(month: monthIndex + 1, year: year)
        else { return nil }
        let days = ISODate.daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    public static func string(_ date: Date) -> String {
        let (year, month, day, second) = ISODate.civil(date)
        let days = ISODate.daysSinceEpoch(year: year, month: month, day: day)
        // 1970-01-01 was a Thursday.
        let weekday = weekdays[((days % 7) + 7 + 4) % 7]
        return "\(weekday), \(ISODate.pad(day, 2)) \(months[month - 1]) \(ISODate.pad(year, 4)) "
            + "\(ISODate.pad(second / 3_600, 2)):\(ISODate.pad(second / 60 % 60, 2)):\(ISODate.pad(second % 60, 2)) GMT"
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
