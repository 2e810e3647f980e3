import FoundationEssentials
import MapGateBase

/// The 127-byte header of a PMTiles v3 archive: where its sections are, how they are compressed,
/// what the tiles are and where the map is. Integers are little-endian.
public struct PMTilesHeader: Sendable, Equatable {
    public static let size = 127
    /// The root directory and the header fit in the first 16 KiB (what clients fetch first).
    public static let rootLimit = 16_384
    static let magic = Array("PMTiles".utf8)

    /// A compression of directories, metadata or tiles.
    public enum Compression: UInt8, Sendable {
        case unknown = 0, none = 1, gzip = 2, brotli = 3, zstd = 4

        var name: String {
            switch self {
            case .unknown: "unknown"
            case .none: "none"
            case .gzip: "gzip"
            case .brotli: "brotli"
            case .zstd: "zstd"
            }
        }
    }

    /// What the tiles are.
    public enum TileType: UInt8, Sendable {
        case unknown = 0, mvt = 1, png = 2, jpeg = 3, webp = 4, avif = 5

        /// Images (PNG, JPEG, WebP, AVIF): bytes a map client reads as they are, never gzipped.
        public var isRaster: Bool { [.png, .jpeg, .webp, .avif].contains(self) }

        /// The MBTiles format of these tiles; nil for unknown and AVIF.
        public var format: TileFormat? {
            switch self {
            case .mvt: .pbf
            case .png: .png
            case .jpeg: .jpg
            case .webp: .webp
            case .unknown, .avif: nil
            }
        }

        public init(format: TileFormat) {
            switch format {
            case .pbf: self = .mvt
            case .png: self = .png
            case .jpg: self = .jpeg
            case .webp: self = .webp
            }
        }
    }

    public var rootOffset: UInt64 = 0
    public var rootLength: UInt64 = 0
    public var metadataOffset: UInt64 = 0
    public var metadataLength: UInt64 = 0
    public var leafDirectoriesOffset: UInt64 = 0
    public var leafDirectoriesLength: UInt64 = 0
    public var tileDataOffset: UInt64 = 0
    public var tileDataLength: UInt64 = 0
    public var addressedTilesCount: UInt64 = 0
    public var tileEntriesCount: UInt64 = 0
    public var tileContentsCount: UInt64 = 0
    public var isClustered = false
    public var internalCompression = Compression.gzip
    public var tileCompression = Compression.none
    public var tileType = TileType.unknown
    public var minZoom: UInt8 = 0
    public var maxZoom: UInt8 = 0
    /// Longitudes and latitudes in units of 10⁻⁷ degree.
    public var minLongitudeE7: Int32 = 0
    public var minLatitudeE7: Int32 = 0
    public var maxLongitudeE7: Int32 = 0
    public var maxLatitudeE7: Int32 = 0
    public var centerZoom: UInt8 = 0
    public var centerLongitudeE7: Int32 = 0
    public var centerLatitudeE7: Int32 = 0

    public init() {}

    /// Reads a header from the first bytes of an archive; `path` names it in errors.
    public init(bytes: Data, path: String) throws {
        let b = [UInt8](bytes.prefix(Self.size))
        func fail(_ reason: String) -> PMTilesError { PMTilesError(path: path, reason: reason) }
        guard b.count >= 7, Array(b[0..<7]) == Self.magic else {
            // What users hand over instead: an archive left gzipped (as it was downloaded), or an
            // MBTiles file under a .pmtiles name.
            if b.starts(with: [0x1F, 0x8B]) {
                throw fail(L.localized("gzip-compressed data, not a PMTiles archive: unpack it first (gunzip -c FILE > UNPACKED.pmtiles)"))
            }
            if b.starts(with: Array("SQLite format 3\u{0}".utf8)) {
                throw fail(L.localized("an SQLite (MBTiles) file, not a PMTiles archive: name it FILE.mbtiles"))
            }
            throw fail(L.localized("not a PMTiles archive: bad magic (the file does not start with \"PMTiles\")"))
        }
        guard b.count >= 8 else { throw fail(L.localized("not a PMTiles archive: the header is cut short (%1$s of 127 bytes)", "\(b.count)")) }
        guard b[7] == 3 else {
            throw fail(L.localized("PMTiles spec version %1$s is not supported (only version 3)", "\(b[7])"))
        }
        guard b.count == Self.size else {
            throw fail(L.localized("not a PMTiles archive: the header is cut short (%1$s of 127 bytes)", "\(b.count)"))
        }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }
        func i32(_ at: Int) -> Int32 { Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }) }
        rootOffset = u64(8)
        rootLength = u64(16)
        metadataOffset = u64(24)
        metadataLength = u64(32)
        leafDirectoriesOffset = u64(40)
        leafDirectoriesLength = u64(48)
        tileDataOffset = u64(56)
        tileDataLength = u64(64)
        addressedTilesCount = u64(72)
        tileEntriesCount = u64(80)
        tileContentsCount = u64(88)
        isClustered = b[96] == 1
        guard let inner = Compression(rawValue: b[97]) else {
            throw fail(L.localized("unknown internal compression %1$s", "\(b[97])"))
        }
        guard let tiles = Compression(rawValue: b[98]) else {
            throw fail(L.localized("unknown tile compression %1$s", "\(b[98])"))
        }
        internalCompression = inner
        tileCompression = tiles
        tileType = TileType(rawValue: b[99]) ?? .unknown
        minZoom = b[100]
        maxZoom = b[101]
        minLongitudeE7 = i32(102)
        minLatitudeE7 = i32(106)
        maxLongitudeE7 = i32(110)
        maxLatitudeE7 = i32(114)
        centerZoom = b[118]
        centerLongitudeE7 = i32(119)
        centerLatitudeE7 = i32(123)
    }

    /// The 127 bytes.
    public var bytes: Data {
        var b: [UInt8] = Self.magic + [3]
        func u64(_ value: UInt64) { for i in 0..<8 { b.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) } }
        func i32(_ value: Int32) { let bits = UInt32(bitPattern: value); for i in 0..<4 { b.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt32(i)))) } }
        for value in [
            rootOffset, rootLength, metadataOffset, metadataLength, leafDirectoriesOffset, leafDirectoriesLength, tileDataOffset,
            tileDataLength, addressedTilesCount, tileEntriesCount, tileContentsCount,
        ] { u64(value) }
        b += [isClustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue, tileType.rawValue, minZoom, maxZoom]
        for value in [minLongitudeE7, minLatitudeE7, maxLongitudeE7, maxLatitudeE7] { i32(value) }
        b.append(centerZoom)
        i32(centerLongitudeE7)
        i32(centerLatitudeE7)
        return Data(b)
    }
}
