import Foundation
import MapGate

/// Dates and text as mapgate shows them: UTC, ISO 8601 in JSON.
enum Format {
    static func iso(_ date: Date) -> String { ISODate.string(date) }

    static func isoOrNull(_ date: Date?) -> Any { date.map(iso) ?? NSNull() }

    static func dateTime(_ date: Date) -> String {
        iso(date).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
