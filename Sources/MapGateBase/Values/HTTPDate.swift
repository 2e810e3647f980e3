import FoundationEssentials

/// HTTP's date format (RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`), always in GMT.
///
/// Read and written with ``ISODate``'s calendar arithmetic, as `DateFormatter` with the
/// `en_US_POSIX` locale and `EEE, dd MMM yyyy HH:mm:ss 'GMT'` did: English day and month names
/// in any case, the day name not checked against the date, one or two digits for the day and the
/// time's fields, one to four for the year (`94` is the year 94), any number of spaces between
/// fields, the comma and `GMT` optional.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func parse(_ text: String) -> Date? {
        var fields = text.trimmingWhitespace().split(separator: " ")
        // Lenient as ICU was: the comma after the day name and the final GMT may be left out.
        if fields.last == "GMT" { fields.removeLast() }
        if let first = fields.first, first.hasSuffix(",") { fields[0] = first.dropLast() }
        func number(_ field: Substring, digits: ClosedRange<Int>) -> Int? {
            guard digits.contains(field.count), field.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int(field)
        }
        guard fields.count == 5, weekdays.contains(where: { $0.equalsIgnoringCase(fields[0]) }),
            let day = number(fields[1], digits: 1...2), let monthIndex = months.firstIndex(where: { $0.equalsIgnoringCase(fields[2]) }),
            let year = number(fields[3], digits: 1...4)
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, let hour = number(clock[0], digits: 1...2), let minute = number(clock[1], digits: 1...2),
            let second = number(clock[2], digits: 1...2), hour < 24, minute < 60, second < 60, day >= 1,
            day <= ISODate.daysIn(month: monthIndex + 1, year: year)
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
