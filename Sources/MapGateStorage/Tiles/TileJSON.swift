import FoundationEssentials
import MapGateBase

/// TileJSON 3.0.0 (github.com/mapbox/tilejson-spec), as the tile server writes it for a region
/// and as clients (and the tests) read it: one Codable type for both. What the server writes
/// validates against the specification's own JSON Schema (issue 38; tested with python
/// `jsonschema`): `vector_layers` is always there (`[]` for raster tiles), each layer with an `id`
/// and `fields`, and `version` is a semver-style version or absent.
public struct TileJSON: Codable, Sendable, Equatable {
    public var tilejson = "3.0.0"
    /// The tile URL template, `http://HOST/REGION/{z}/{x}/{y}.EXT`.
    public var tiles: [String]
    public var name: String
    /// The region's version as TileJSON wants it (``semanticVersion(_:)``); nil when it has no
    /// such form.
    public var version: String?
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
    /// A vector region's layers (the MBTiles `json` metadata's `vector_layers`, as
    /// ``schemaLayers(_:)`` keeps them); `[]` for raster tiles.
    public var vectorLayers: [JSONValue]?

    enum CodingKeys: String, CodingKey {
        case tilejson, tiles, name, version, scheme, bounds, center, minzoom, maxzoom, format, attribution, description
        case vectorLayers = "vector_layers"
    }

    public init(
        tiles: [String], name: String, version: String?, bounds: [Double], center: [Double], minzoom: Int, maxzoom: Int, format: String,
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

    /// A publisher's region version in TileJSON's form, a semantic version (semver.org 2.0.0,
    /// whole): as it is when it is one; one to three numbers made three without leading zeros
    /// (`2026.11` → `2026.11.0`, `7` → `7.0.0`, `2026.11.05` → `2026.11.5`); else nil: `v7-beta`,
    /// `1.2.3.4` and `1.0.0-` are no version TileJSON can carry, and the field is left out (found
    /// by an attack: they were written as they were, and the schema's pattern, not anchored,
    /// let them pass).
    public static func semanticVersion(_ version: String) -> String? {
        let semantic =
            /(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)(?:-(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?/
        if version.wholeMatch(of: semantic) != nil { return version }
        guard version.wholeMatch(of: /[0-9]{1,18}(\.[0-9]{1,18}){0,2}/) != nil else { return nil }
        var numbers = version.split(separator: ".").map { String(Int($0) ?? 0) }
        while numbers.count < 3 { numbers.append("0") }
        return numbers.joined(separator: ".")
    }

    /// A region's bounds as TileJSON may carry them: bounds across the antimeridian (west east
    /// of east, `170,-10,-170,10`, as MBTiles writers put them) become the band of latitudes
    /// they span all round the world, since TileJSON's bounds "MUST NOT wrap around the
    /// ante-meridian" (found by an attack: MapLibre, reading them as they were, asked for no
    /// tile at all).
    public static func unwrappedBounds(_ bounds: [Double]) -> [Double] {
        guard bounds.count == 4, bounds[0] > bounds[2] else { return bounds }
        return [-180, bounds[1], 180, bounds[3]]
    }

    /// A writer's `vector_layers` as the schema requires them: objects with a string `id` (others
    /// are dropped) and a `fields` object of strings (made empty when missing; a value that is
    /// not a string is dropped); `minzoom` and `maxzoom` kept only as integers, `description`
    /// only as a string; anything else as it was.
    public static func schemaLayers(_ layers: [JSONValue]) -> [JSONValue] {
        layers.compactMap { layer in
            guard case .object(var fields) = layer, fields["id"]?.stringValue != nil else { return nil }
            if case .object(let described)? = fields["fields"] {
                fields["fields"] = .object(described.filter { $0.value.stringValue != nil })
            } else {
                fields["fields"] = .object([:])
            }
            for key in ["minzoom", "maxzoom"] where fields[key] != nil {
                if let value = fields[key], !value.isBoolean, let number = value.int { fields[key] = .integer(Int64(number)) } else { fields[key] = nil }
            }
            if fields["description"] != nil, fields["description"]?.stringValue == nil { fields["description"] = nil }
            return .object(fields)
        }
    }

    /// Keys sorted, slashes unescaped: the same region gives the same bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
