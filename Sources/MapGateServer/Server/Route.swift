import MapGateWorkflows

/// What a request path asks the tile server for, parsed once: the handler dispatches on it, the
/// metrics label it, CORS asks whether it is public.
public enum Route: Equatable, Sendable {
    case index
    case health
    case metrics
    /// One of Leaflet's files (`/_leaflet/NAME`).
    case leaflet(String)
    /// One of MapLibre's files (`/_maplibre/NAME`).
    case maplibre(String)
    /// A region's viewer page (`/view/REGION`).
    case viewer(String)
    /// The fonts labels can use (`/fonts.json`).
    case fontList
    /// A glyph range (`/fonts/FONTSTACK/START-END.pbf`).
    case glyphs(fontstack: String, file: String)
    /// The publisher's installed styles (`/styles.json`).
    case styleList
    /// A file of a publisher's style: `style.json` or a sprite (`/styles/STYLE/FILE`).
    case publishedStyle(id: String, file: String)
    /// A region's MapLibre style (`/REGION/style.json`).
    case style(String)
    /// A region's TileJSON (`/REGION.json`; also `/REGION/metadata.json`, where GDAL's MVT driver
    /// and tippecanoe's tile folders look for a tileset's metadata).
    case tileJSON(String)
    /// A tile: the path's four parts (`REGION`, `Z`, `X`, `Y.EXT`).
    case tile([String])
    /// A file of the mirror `serve --share` offers (``MirrorShare``), by its name in the mirror.
    case mirror(String)
    case other

    /// The route of `path` (the decoded path, without the query).
    public init(path: String) {
        switch path {
        case "/": self = .index
        case "/health": self = .health
        case "/metrics": self = .metrics
        case "/fonts.json": self = .fontList
        case "/styles.json": self = .styleList
        default:
            if path.hasPrefix(MirrorLayout.sharePath + "/") {
                self = .mirror(String(path.dropFirst(MirrorLayout.sharePath.count + 1)))
            } else if path.hasPrefix("/_leaflet/") {
                self = .leaflet(String(path.dropFirst("/_leaflet/".count)))
            } else if path.hasPrefix("/_maplibre/") {
                self = .maplibre(String(path.dropFirst("/_maplibre/".count)))
            } else if path.hasPrefix("/view/") {
                self = .viewer(String(path.dropFirst("/view/".count)))
            } else {
                // Split on the bytes, not on characters (issue 42: this runs for every tile).
                let parts = path.utf8.dropFirst().split(separator: 0x2F, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
                switch parts.count {
                // A font stack or style id holding a slash (`/fonts/a/b/0-255.pbf`) is no route:
                // never a tile of a region named `fonts`.
                case _ where parts.count != 3 && (parts[0] == "fonts" || parts[0] == "styles"): self = .other
                case 3 where parts[0] == "fonts": self = .glyphs(fontstack: parts[1], file: parts[2])
                case 3 where parts[0] == "styles": self = .publishedStyle(id: parts[1], file: parts[2])
                case 2 where parts[1] == "style.json": self = .style(parts[0])
                case 2 where parts[1] == "metadata.json": self = .tileJSON(parts[0])
                case 1 where parts[0].hasSuffix(".json"): self = .tileJSON(String(parts[0].dropLast(5)))
                case 4: self = .tile(parts)
                default: self = .other
                }
            }
        }
    }

    /// The route of a request target, which may carry a query.
    public init(target: String) {
        self.init(path: target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target)
    }

    /// The label of `mapgate_http_requests_total{route=…}`.
    public var name: String {
        switch self {
        case .index: "index"
        case .health: "health"
        case .metrics: "metrics"
        case .leaflet: "leaflet"
        case .maplibre: "maplibre"
        case .viewer: "viewer"
        case .fontList, .glyphs: "fonts"
        case .styleList, .publishedStyle: "styles"
        case .style: "style"
        case .tileJSON: "tilejson"
        case .tile: "tile"
        case .mirror: "mirror"
        case .other: "other"
        }
    }

    /// Tiles, TileJSON, styles, glyphs and Leaflet's and MapLibre's files: public map data that
    /// any origin may read. The region list, the viewer, `/health` and `/metrics` are not.
    public var isPublic: Bool {
        switch self {
        case .leaflet, .maplibre, .fontList, .glyphs, .styleList, .publishedStyle, .style, .tileJSON, .tile: true
        case .index, .health, .metrics, .viewer, .mirror, .other: false
        }
    }
}
