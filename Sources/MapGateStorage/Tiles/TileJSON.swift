import FoundationEssentials
import MapGateBase

/// TileJSON 3.0.0 (github.com/mapbox/tilejson-spec), as the tile server writes it for a region
/// and as clients (and the tests) read it: one Codable type for both.
public struct TileJSON: Codable, Sendable, Equatable {
    public var tilejson = "3.0.0"
    /// The tile URL template, `http://HOST/REGION/{z}/{x}/{y}.EXT`.
    public var tiles: [String]
    public var name: String
    public var version: String
    public var scheme = "xyz"
    /// `[west, south, east, north]`.
    public var bounds: [Double]
    /// `[longitude, latitude, zoom]`.
    public var center: [Double]
    public var minzoom: Int
    public var maxzoom: Int
    /// `png`, `jpg`, `webp` or `pbf`.
    public var format: String
    public var attribution: String?
    public var description: String?
    /// A vector region's layers (the MBTiles `json` metadata's `vector_layers`), as they were.
    public var vectorLayers: [JSONValue]?

    enum CodingKeys: String, CodingKey {
        case tilejson, tiles, name, version, scheme, bounds, center, minzoom, maxzoom, format, attribution, description
        case vectorLayers = "vector_layers"
    }

    public init(
        tiles: [String], name: String, version: String, bounds: [Double], center: [Double], minzoom: Int, maxzoom: Int, format: String,
        attribution: String? = nil, description: String? = nil, vectorLayers: [JSONValue]? = nil
    ) {
        self.tiles = tiles
        self.name = name
        self.version = version
        self.bounds = bounds
        self.center = center
        self.minzoom = minzoom
        self.maxzoom = maxzoom
        self.format = format
        self.attribution = attribution
        self.description = description
        self.vectorLayers = vectorLayers
    }

    /// Keys sorted, slashes unescaped: the same region gives the same bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
