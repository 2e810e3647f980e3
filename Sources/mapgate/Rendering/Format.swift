import FoundationEssentials
import MapGate

/// Dates and text as mapgate shows them: UTC, ISO 8601 in JSON.
enum Format {
    static func iso(_ date: Date) -> String { ISODate.string(date) }

    static func dateTime(_ date: Date) -> String {
        iso(date).replacing("T", with: " ").replacing("Z", with: " UTC")
    }

    static func bytes(_ count: Int64) -> String {
        ByteCount.text(count)
    }
}
