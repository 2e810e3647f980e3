import FoundationEssentials
import MapGateStorage

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
    /// Why the full package is not where `url` says, when the place the catalog was read from
    /// carries the region only as a delta (a mirror): nil when it is there.
    public var fullPackageAbsence: String? = nil

    /// The memberwise initializer (the catalog's checks make each region; a download takes a
    /// ``PackageReference``).
    init(
        id: String, name: String, version: String, url: String, size: Int64, sha256: String, installedSize: Int64,
        format: TileFormat, bounds: [Double]? = nil, minzoom: Int, maxzoom: Int, minimumAppVersion: String? = nil,
        contentHash: String? = nil, deltas: [CatalogDelta] = []
    ) {
        self.id = id
        self.name = name
        self.version = version
        self.url = url
        self.size = size
        self.sha256 = sha256
        self.installedSize = installedSize
        self.format = format
        self.bounds = bounds
        self.minzoom = minzoom
        self.maxzoom = maxzoom
        self.minimumAppVersion = minimumAppVersion
        self.contentHash = contentHash
        self.deltas = deltas
    }
}
