import FoundationEssentials

/// A delta package on offer: applied to the tiles of `fromVersion` (whose `agg_tiles_hash` is
/// `fromHash`), it gives the region's current version.
public struct CatalogDelta: Sendable, Equatable {
    public var fromVersion: String
    /// 32 upper-case hex digits.
    public var fromHash: String
    /// Absolute URL of the delta (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String

    public init(fromVersion: String, fromHash: String, url: String, size: Int64, sha256: String) {
        self.fromVersion = fromVersion
        self.fromHash = fromHash
        self.url = url
        self.size = size
        self.sha256 = sha256
    }
}
