import FoundationEssentials

/// One file to download from a catalog, as the downloader takes it: a region's package, a
/// delta, or a style's package. `id` names its partial and unpacked files in the data directory.
public struct PackageReference: Sendable, Equatable {
    /// The name its files go by: a region's id, or one no region can have (a style's is
    /// `_style-ID`: a region id starts with a letter or a digit), so that their files never meet.
    public var id: String
    /// Absolute URL (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String
    /// The most it may unpack to: a region's size once installed.
    public var installedSize: Int64

    public init(id: String, url: String, size: Int64, sha256: String, installedSize: Int64) {
        self.id = id
        self.url = url
        self.size = size
        self.sha256 = sha256
        self.installedSize = installedSize
    }
}

extension CatalogRegion {
    /// The region's full package.
    public var package: PackageReference {
        PackageReference(id: id, url: url, size: size, sha256: sha256, installedSize: installedSize)
    }

    /// `delta`, downloaded in place of the package: under the region's name, unpacking to no more
    /// than the region does.
    public func package(of delta: CatalogDelta) -> PackageReference {
        PackageReference(id: id, url: delta.url, size: delta.size, sha256: delta.sha256, installedSize: installedSize)
    }
}
