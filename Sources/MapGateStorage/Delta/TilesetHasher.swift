import FoundationEssentials

/// Computes martin's `agg_tiles_hash` incrementally, from tiles handed over one by one in
/// (zoom, column, row) order: for example while a tileset is written, so that no second pass over
/// the file is needed.
///
/// The hash is MD5 over, for each tile in order, the decimal text of `zoom_level`, `tile_column`
/// and `tile_row` followed by the `tile_data` bytes, with no separators (a NULL `tile_data`
/// contributes nothing). See ``TilesetHash``. Not `Sendable`: it owns a digest context.
///
/// Made with a `declaredHex`, it counts the tiles but digests nothing and gives that hash: for
/// tiles whose bytes are already pinned by a signed SHA-256 (a full package's), where the hash
/// was computed by whoever signed it.
public final class TilesetHasher {
    /// Where the hash comes from: digested here, or declared by the caller.
    private enum Digest {
        case md5(MD5Hasher)
        case declared(String)
    }

    private let digest: Digest
    /// The rows' multiset hash, when asked for, and what computes it.
    private var ltHash: TilesLtHash?
    private let rowHasher: TilesLtHash.RowHasher?
    /// The digest when this hasher computes one.
    private var md5: MD5Hasher? { if case .md5(let md5) = digest { md5 } else { nil } }
    private var last: (zoom: Int, column: Int, row: Int)?
    public private(set) var tileCount = 0
    public private(set) var nullTileCount = 0
    /// The first tile with a NULL `tile_data`, as `z/x/y` (TMS row), if any.
    public private(set) var firstNullTile: String?

    /// `ltHash`: the tiles' ``TilesLtHash`` is computed too.
    public init(declaredHex: String? = nil, ltHash: Bool = false) throws {
        digest = try declaredHex.map { .declared($0.uppercased()) } ?? .md5(MD5Hasher())
        rowHasher = ltHash ? try TilesLtHash.RowHasher() : nil
        self.ltHash = ltHash ? TilesLtHash() : nil
    }

    /// Adds one tile. `row` is the TMS row as MBTiles stores it; `data` nil stands for a NULL
    /// `tile_data`. Throws when the tile does not come strictly after the previous one.
    public func add(zoom: Int, column: Int, row: Int, data: Data?) throws {
        if let last, !(last < (zoom, column, row)) {
            throw DeltaError(
                path: "agg_tiles_hash", reason: .outOfOrder(
                    "\(zoom)/\(column)/\(row) after \(last.zoom)/\(last.column)/\(last.row); "
                        + "tiles must come in increasing (zoom_level, tile_column, tile_row) order, each once"))
        }
        last = (zoom, column, row)
        if let md5 {
            for number in [zoom, column, row] {
                try Array(String(number).utf8).withUnsafeBytes { try md5.update($0) }
            }
            try data?.withUnsafeBytes { try md5.update($0) }
        }
        if let rowHasher {
            let lanes = try (data ?? Data()).withUnsafeBytes { try rowHasher.lanes(zoom: Int64(zoom), column: Int64(column), row: Int64(row), data: $0) }
            ltHash?.add(lanes)
        }
        if data == nil {
            nullTileCount += 1
            if firstNullTile == nil { firstNullTile = "\(zoom)/\(column)/\(row)" }
        }
        tileCount += 1
    }

    /// Adds the row a statement stands on: columns 0–2 are the coordinates already rendered as
    /// text by SQLite, column 3 is `tile_data`. The statement's ORDER BY guarantees the order.
    func addRow(of statement: SQLiteStatement) throws {
        if let md5 {
            for column in Int32(0)..<4 {
                try statement.withBlob(column) { try md5.update($0) }
            }
        }
        if let rowHasher { ltHash?.add(try rowHasher.lanes(of: statement)) }
        if statement.isNull(3) {
            nullTileCount += 1
            if firstNullTile == nil { firstNullTile = [0, 1, 2].map { statement.text($0) ?? "NULL" }.joined(separator: "/") }
        }
        tileCount += 1
    }

    /// The hash of everything added so far. The hasher starts afresh afterwards.
    public func finalize() throws -> TilesetHash {
        let hex: String
        switch digest {
        case .md5(let md5): hex = try md5.finalizeHex()
        case .declared(let declared): hex = declared
        }
        let hash = TilesetHash(hex: hex, tileCount: tileCount, nullTileCount: nullTileCount, firstNullTile: firstNullTile, ltHash: ltHash)
        if ltHash != nil { ltHash = TilesLtHash() }
        last = nil
        firstNullTile = nil
        tileCount = 0
        nullTileCount = 0
        return hash
    }
}
