import FoundationEssentials
import MapGate

/// Dates and text as mapgate shows them: local time to people, ISO 8601 (UTC) in JSON.
enum Format {
    static func iso(_ date: Date) -> String { ISODate.string(date) }

    /// `date` as a person reads a clock (``LocalTime``).
    static func localDateTime(_ date: Date) -> String { LocalTime.text(date) }

    static func bytes(_ count: Int64) -> String {
        ByteCount.text(count)
    }
}
