import Foundation

/// ISO 8601 dates as the store, catalogs and mapgate's output write them (UTC).
public enum ISODate {
    /// Parses `2024-11-20T13:36:18Z`, with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// A date as `YYYY-MM-DD` in UTC, or `?` when unknown.
    public static func day(_ date: Date?) -> String {
        guard let date else { return "?" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }

    /// A date as `2024-11-20T13:36:18Z`.
    public static func string(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
