import CCrypto
import FoundationEssentials
import MapGateBase

/// A multiset hash of a tileset's rows `(zoom_level, tile_column, tile_row, tile_data)`: LtHash16
/// (Bellare and Micciancio's additive construction, as Lewi et al. made it for Facebook's database
/// replication, 2019). The hash of a set is the lane-wise sum, modulo 2¹⁶, of each row's hash
/// (1,024 lanes of 16 bits), so it is updated by the rows that change: the hash of a delta's
/// result is the base's, minus the rows it replaces or removes, plus the rows it writes, computed
/// in the time of the changed tiles instead of a pass over the whole file
/// (docs/decisions/delta-in-place.md).
///
/// A row's hash: SHA-256 of the row (`zoom_level`, `tile_column`, `tile_row` as 64-bit
/// little-endian integers, then the `tile_data` bytes; the coordinates have a fixed length, so
/// the encoding is unambiguous), extended to 2,048 bytes by SHAKE256, read as 1,024 little-endian
/// lanes. Both from libcrypto.
public struct TilesLtHash: Sendable, Equatable {
    /// Lanes of 16 bits.
    public static let laneCount = 1024
    /// The state's size in bytes.
    public static let byteCount = laneCount * 2

    private(set) var lanes: [UInt16]

    /// The hash of no rows.
    public init() {
        lanes = Array(repeating: 0, count: Self.laneCount)
    }

    /// SHA-256 (64 lowercase hex digits) of the lanes, little-endian.
    public var digest: String {
        get throws { try SHA256Hasher.hex(of: Data(bytes)) }
    }

    /// What a delta carries (``MBTilesDelta/ltHashChangeKey``): the ``digest`` of `target − base`,
    /// lane by lane, where each is the hash of a whole tileset. A delta's rows give it only if
    /// they are the difference between the two: `base − replaced + written = target` exactly when
    /// `written − replaced = target − base`.
    public static func changeDigest(from base: TilesLtHash, to target: TilesLtHash) throws -> String {
        var change = target
        change.remove(base)
        return try change.digest
    }

    /// The lanes, little-endian.
    private var bytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        for (index, lane) in lanes.enumerated() {
            bytes[2 * index] = UInt8(truncatingIfNeeded: lane)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: lane >> 8)
        }
        return bytes
    }

    /// `bytes` (``byteCount`` of them) read as little-endian lanes.
    static func lanes(littleEndian bytes: [UInt8]) -> [UInt16] {
        var lanes = [UInt16](repeating: 0, count: laneCount)
        for index in 0..<laneCount {
            let low = UInt16(bytes[2 * index])
            let high = UInt16(bytes[2 * index + 1])
            lanes[index] = low | high << 8
        }
        return lanes
    }

    mutating func add(_ row: [UInt16]) {
        precondition(row.count == Self.laneCount)
        lanes.withUnsafeMutableBufferPointer { lanes in
            row.withUnsafeBufferPointer { row in
                for index in 0..<Self.laneCount { lanes[index] &+= row[index] }
            }
        }
    }

    mutating func remove(_ row: [UInt16]) {
        precondition(row.count == Self.laneCount)
        lanes.withUnsafeMutableBufferPointer { lanes in
            row.withUnsafeBufferPointer { row in
                for index in 0..<Self.laneCount { lanes[index] &-= row[index] }
            }
        }
    }

    /// Takes away a set's hash (its rows, all of them).
    public mutating func remove(_ other: TilesLtHash) {
        remove(other.lanes)
    }

    /// Adds a set's hash: the hash of both sets' rows together (a row in both counts twice).
    public mutating func add(_ other: TilesLtHash) {
        add(other.lanes)
    }

    /// Hashes rows one by one (two libcrypto contexts, kept). Not `Sendable`.
    final class RowHasher {
        private let sha256: EVPDigestContext
        private let shake: EVPDigestContext

        init() throws {
            sha256 = try EVPDigestContext()
            shake = try EVPDigestContext()
        }

        /// The lanes of the row `z/x/y` (TMS row) with `data` as its `tile_data`.
        func lanes(zoom: Int64, column: Int64, row: Int64, data: UnsafeRawBufferPointer) throws -> [UInt16] {
            try sha256.begin(ccrypto_EVP_sha256(), name: "SHA-256")
            var coordinates = (zoom.littleEndian, column.littleEndian, row.littleEndian)
            try withUnsafeBytes(of: &coordinates) { try sha256.add($0, name: "SHA-256") }
            try sha256.add(data, name: "SHA-256")
            let digest = try sha256.end(name: "SHA-256")
            try shake.begin(ccrypto_EVP_shake256(), name: "SHAKE256")
            try digest.withUnsafeBytes { try shake.add($0, name: "SHAKE256") }
            let bytes = try shake.end(name: "SHAKE256", extendedTo: TilesLtHash.byteCount)
            return TilesLtHash.lanes(littleEndian: bytes)
        }

        /// The lanes of the row a statement stands on: columns 0–2 the coordinates (as numbers),
        /// column 3 `tile_data`.
        func lanes(of statement: SQLiteStatement) throws -> [UInt16] {
            let (zoom, column, row) = (statement.int64(0), statement.int64(1), statement.int64(2))
            return try statement.withBlob(3) { try lanes(zoom: zoom, column: column, row: row, data: $0) }
        }
    }
}
