/// One tile's place in the XYZ scheme (y from the north, as web maps count; MBTiles rows are TMS
/// and are flipped where a file is read). The one parser of `Z`, `X`, `Y` for `mapgate tile` and
/// the server.
public struct TileCoordinate: Sendable, Equatable, CustomStringConvertible {
    public let z: Int
    public let x: Int
    public let y: Int

    /// The deepest zoom accepted (MBTiles files in use stop far earlier).
    public static let maximumZoom = 30
    /// Every zoom a tile, a catalog or a file's metadata may name.
    public static let zooms = 0...maximumZoom

    /// The latitude where Web Mercator's square world ends (±85.0511°, atan(sinh(π))): bounds
    /// beyond it cannot be shown.
    public static let maximumLatitude = 85.0511

    /// The whole of what a tile can show, `[west, south, east, north]`.
    public static let worldBounds = [-180, -maximumLatitude, 180, maximumLatitude]

    /// The zoom a region is taken to end at when neither its tiles nor its record say (the deepest
    /// zoom of the usual vector tile sets: OpenMapTiles, tippecanoe's default).
    public static let defaultMaximumZoom = 14

    /// The row of XYZ row `y` at zoom `z` in the TMS scheme MBTiles files use (y from the south),
    /// and back: the one flip. Total, in wrapping arithmetic: a file's rows and zooms can be any
    /// integers (found by the fuzzer: zoom 63 trapped on overflow while reading every tile), and
    /// flipping twice still gives the row back.
    public static func flippedRow(_ y: Int, zoom z: Int) -> Int { (1 << z) &- 1 &- y }

    /// This tile's row in an MBTiles file.
    public var tmsRow: Int { Self.flippedRow(y, zoom: z) }

    /// Nil unless `z` is 0–30 and `x`, `y` lie within `2^z`.
    public init?(z: Int, x: Int, y: Int) {
        guard Self.zooms.contains(z), (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(y) else { return nil }
        self.z = z
        self.x = x
        self.y = y
    }

    /// Parses decimal digits only (no sign, no spaces, at most 10 digits): nil otherwise, or out
    /// of range.
    public init?(z: String, x: String, y: String) {
        // On the bytes (a server parses three for every tile it answers).
        func number(_ text: String) -> Int? {
            guard !text.utf8.isEmpty, text.utf8.count <= 10 else { return nil }
            var value = 0
            for byte in text.utf8 {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let z = number(z), let x = number(x), let y = number(y) else { return nil }
        self.init(z: z, x: x, y: y)
    }

    /// `z/x/y`.
    public var description: String { "\(z)/\(x)/\(y)" }
}
