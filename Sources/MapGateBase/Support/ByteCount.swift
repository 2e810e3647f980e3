import FoundationEssentials

/// Byte counts for people: `512 B`, `48.2 MB`, `1.5 GB` (decimal units, one decimal).
public enum ByteCount {
    public static func text(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(cFormat: "%.1f", value) + " " + units[unit]
    }
}
