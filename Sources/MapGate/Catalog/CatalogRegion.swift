import FoundationEssentials

/// One region on offer.
public struct CatalogRegion: Sendable, Equatable {
    public var id: String
    public var name: String
    public var version: String
    /// Absolute URL of the package (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String
    /// Size of the MBTiles file once decompressed.
    public var installedSize: Int64
    public var format: TileFormat
    public var bounds: [Double]?
    public var minzoom: Int
    public var maxzoom: Int
    public var minimumAppVersion: String?
    /// martin's `agg_tiles_hash` of the region's tiles (32 upper-case hex digits), when given.
    public var contentHash: String? = nil
    /// Tile-level deltas from earlier versions to this one (see ``MBTilesDelta``).
    public var deltas: [CatalogDelta] = []
}
