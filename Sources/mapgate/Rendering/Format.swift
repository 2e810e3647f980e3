import FoundationEssentials
import MapGate

/// Dates and text as mapgate shows them: ISO 8601 (UTC) in JSON (people read ``LocalTime``).
enum Format {
    static func iso(_ date: Date) -> String { ISODate.string(date) }

    static func bytes(_ count: Int64) -> String {
        ByteCount.text(count)
    }
}
