import FoundationEssentials
import MapGateStorage

/// A region installed in the data directory, as recorded in the state database.
public struct InstalledRegion: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var version: String
    public var format: TileFormat
    /// SHA-256 of the installed `.mbtiles` file: what tells the file installed from another when
    /// its stamp changed. Nil when it was not taken: a delta's result whose apply checked it by
    /// the LtHash of its change (``RegionInstaller``), where hashing the whole file would be most
    /// of the update's time; its tiles' `contentHash` stands for it then (stored as '').
    public var sha256: String?
    /// Size of the installed `.mbtiles` file.
    public var size: Int64
    public var installedAt: Date
    public var minzoom: Int?
    public var maxzoom: Int?
    public var bounds: [Double]?
    public var sourceURL: String?
    /// martin's `agg_tiles_hash` of the tiles, computed at install: what a delta's `fromHash` is
    /// matched against (nil for regions installed before mapgate recorded it).
    public var contentHash: String? = nil
    /// The number of tiles, counted once at install (nil for regions installed before).
    public var tileCount: Int? = nil
    /// The file's size, modification time and inode right after install (nil for regions
    /// installed before mapgate recorded them): what `sync` and `list` check cheaply.
    public var fileStamp: RegionFileStamp? = nil
    /// The package was an SQLite file in WAL mode, which `sync` switched to rollback-journal mode
    /// by its two header bytes (``SQLiteHeader/leaveWAL(_:)``): `mirror` puts them back to
    /// rebuild the package byte for byte (nil or false: the file is the package's bytes).
    public var packageWasWAL: Bool? = nil
    /// The SHA-256 of the delta that gave this file (nil: installed from a full package, or
    /// before mapgate recorded it): `mirror` then knows to carry that delta, and says so when it
    /// is no longer kept, instead of leaving the region out as if by rule.
    public var deltaSHA256: String? = nil
    /// The SHA-256 of the file's metadata rows (``MBTilesFile/metadataDigest()``), taken when its
    /// own SHA-256 is not (``sha256``): with the tiles' `contentHash`, what tells the file
    /// installed from another (bounds or attribution changed under the same tiles).
    public var metadataSHA256: String? = nil

    /// As ``PendingInstall`` keeps it: everything but the stamp, which is the file's once in place.
    private enum CodingKeys: String, CodingKey {
        case id, name, version, format, sha256, size, installedAt, minzoom, maxzoom, bounds, sourceURL, contentHash, tileCount, packageWasWAL, deltaSHA256,
            metadataSHA256
    }
}
