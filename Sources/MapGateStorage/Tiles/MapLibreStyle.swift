import FoundationEssentials
import MapGateBase

/// The MapLibre style (spec version 8) mapgate generates for a region and serves as
/// `/REGION/style.json`: ``VectorStyle`` makes a vector region's, ``raster(regionID:name:tileJSONURL:)``
/// a raster region's. One Codable type for the wire format, as the catalog and TileJSON have; a
/// property that is nil is left out. Only what mapgate writes has a field: a publisher's own
/// style is another matter (``StyleSheet``).
public struct MapLibreStyle: Codable, Sendable, Equatable {
    public var version = 8
    public var name: String
    /// MapLibre's glyph URL template; only when labels are drawn.
    public var glyphs: String?
    public var sources: [String: Source]
    /// Drawn in order: the first at the bottom.
    public var layers: [Layer]

    public init(name: String, glyphs: String? = nil, sources: [String: Source], layers: [Layer]) {
        (self.name, self.glyphs, self.sources, self.layers) = (name, glyphs, sources, layers)
    }

    /// A region's tiles, described by its TileJSON.
    public struct Source: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            case vector, raster
        }

        public var type: Kind
        /// The TileJSON's URL.
        public var url: String
        public var tileSize: Int?

        public init(type: Kind, url: String, tileSize: Int? = nil) {
            (self.type, self.url, self.tileSize) = (type, url, tileSize)
        }
    }

    public struct Layer: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable {
            case background, fill, line, circle, symbol, raster
        }

        public var id: String
        public var type: Kind
        public var source: String?
        public var sourceLayer: String?
        public var minzoom: Int?
        public var maxzoom: Int?
        /// A MapLibre expression (``geometryFilter(_:)``).
        public var filter: JSONValue?
        public var layout: Layout?
        public var paint: Paint?
        /// `mapgate:layer`: the region's layer it draws (the viewer's layer switches use it).
        public var metadata: [String: String]?

        enum CodingKeys: String, CodingKey {
            case id, type, source, sourceLayer = "source-layer", minzoom, maxzoom, filter, layout, paint, metadata
        }

        public init(
            id: String, type: Kind, source: String? = nil, sourceLayer: String? = nil, minzoom: Int? = nil, maxzoom: Int? = nil,
            filter: JSONValue? = nil, layout: Layout? = nil, paint: Paint? = nil, metadata: [String: String]? = nil
        ) {
            (self.id, self.type, self.source, self.sourceLayer, self.minzoom, self.maxzoom) = (id, type, source, sourceLayer, minzoom, maxzoom)
            (self.filter, self.layout, self.paint, self.metadata) = (filter, layout, paint, metadata)
        }
    }

    /// The paint properties mapgate sets, of every layer type it makes.
    public struct Paint: Codable, Sendable, Equatable {
        public var backgroundColor: String?
        public var fillColor: String?
        public var fillOpacity: Double?
        public var fillOutlineColor: String?
        public var lineColor: String?
        public var lineWidth: Double?
        public var circleColor: String?
        public var circleRadius: Double?
        public var circleStrokeColor: String?
        public var circleStrokeWidth: Double?
        public var textColor: String?
        public var textHaloColor: String?
        public var textHaloWidth: Double?

        enum CodingKeys: String, CodingKey {
            case backgroundColor = "background-color", fillColor = "fill-color", fillOpacity = "fill-opacity"
            case fillOutlineColor = "fill-outline-color", lineColor = "line-color", lineWidth = "line-width"
            case circleColor = "circle-color", circleRadius = "circle-radius", circleStrokeColor = "circle-stroke-color"
            case circleStrokeWidth = "circle-stroke-width", textColor = "text-color", textHaloColor = "text-halo-color"
            case textHaloWidth = "text-halo-width"
        }

        public init(
            backgroundColor: String? = nil, fillColor: String? = nil, fillOpacity: Double? = nil, fillOutlineColor: String? = nil,
            lineColor: String? = nil, lineWidth: Double? = nil, circleColor: String? = nil, circleRadius: Double? = nil,
            circleStrokeColor: String? = nil, circleStrokeWidth: Double? = nil, textColor: String? = nil, textHaloColor: String? = nil,
            textHaloWidth: Double? = nil
        ) {
            (self.backgroundColor, self.fillColor, self.fillOpacity, self.fillOutlineColor) = (backgroundColor, fillColor, fillOpacity, fillOutlineColor)
            (self.lineColor, self.lineWidth, self.circleColor, self.circleRadius) = (lineColor, lineWidth, circleColor, circleRadius)
            (self.circleStrokeColor, self.circleStrokeWidth) = (circleStrokeColor, circleStrokeWidth)
            (self.textColor, self.textHaloColor, self.textHaloWidth) = (textColor, textHaloColor, textHaloWidth)
        }
    }

    /// The layout properties of the labels mapgate draws.
    public struct Layout: Codable, Sendable, Equatable {
        /// A MapLibre expression giving the text.
        public var textField: JSONValue?
        /// The fontstack.
        public var textFont: [String]?
        public var textSize: Double?
        /// `point` or `line`.
        public var symbolPlacement: String?
        public var textAnchor: String?
        /// In ems, `[x, y]`.
        public var textOffset: [Double]?

        enum CodingKeys: String, CodingKey {
            case textField = "text-field", textFont = "text-font", textSize = "text-size", symbolPlacement = "symbol-placement"
            case textAnchor = "text-anchor", textOffset = "text-offset"
        }

        public init(
            textField: JSONValue? = nil, textFont: [String]? = nil, textSize: Double? = nil, symbolPlacement: String? = nil,
            textAnchor: String? = nil, textOffset: [Double]? = nil
        ) {
            (self.textField, self.textFont, self.textSize, self.symbolPlacement) = (textField, textFont, textSize, symbolPlacement)
            (self.textAnchor, self.textOffset) = (textAnchor, textOffset)
        }
    }

    /// `["match", ["geometry-type"], types, true, false]`: features of one of `types`.
    public static func geometryFilter(_ types: [String]) -> JSONValue {
        .array([.string("match"), .array([.string("geometry-type")]), .array(types.map(JSONValue.string)), .bool(true), .bool(false)])
    }

    /// The style of a raster region: its tiles, `tileSize` pixels each (256 unless the file says
    /// otherwise), and nothing else.
    public static func raster(regionID: String, name: String, tileJSONURL: String, tileSize: Int = 256) -> MapLibreStyle {
        MapLibreStyle(
            name: name, sources: [regionID: Source(type: .raster, url: tileJSONURL, tileSize: tileSize)],
            layers: [Layer(id: regionID, type: .raster, source: regionID)])
    }
}
