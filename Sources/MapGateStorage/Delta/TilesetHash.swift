import FoundationEssentials
import MapGateBase

/// martin's `agg_tiles_hash` of an MBTiles tileset, with the number of tiles it covers.
///
/// Defined by martin's `mbtiles` tool (`calc_agg_tiles_hash`) as
/// `md5_concat_hex(CAST(zoom_level AS TEXT), CAST(tile_column AS TEXT), CAST(tile_row AS TEXT),
/// tile_data ORDER BY zoom_level, tile_column, tile_row)` over the `tiles` table or view, in upper
/// case, where NULL values are skipped and an empty tileset hashes to the MD5 of nothing. Computed
/// here by reading the rows in that order and feeding MD5 in Swift, which gives the same bytes
/// without needing SQLite 3.44's ordered aggregates.
public struct TilesetHash: Sendable, Equatable, CustomStringConvertible {
    /// The hash of a tileset with no tiles (the MD5 of no bytes).
    public static let emptyHex = "D41D8CD98F00B204E9800998ECF8427E"

    /// 32 upper-case hex digits.
    public let hex: String
    /// How many rows of `tiles` were hashed.
    public let tileCount: Int
    /// How many of them have a NULL `tile_data`.
    public let nullTileCount: Int
    /// The first of them as `z/x/y` (TMS row, as stored), if any.
    public var firstNullTile: String? = nil
    /// The tiles' ``TilesLtHash``, when it was asked for.
    public var ltHash: TilesLtHash? = nil

    public var description: String { hex }

    /// The hash and count of tiles not passed over here: a delta's result, checked by its apply
    /// (``DeltaSummary/resultChecked``), whose count is the base's and the change's.
    public static func checked(hex: String, tileCount: Int) -> TilesetHash {
        TilesetHash(hex: hex.uppercased(), tileCount: tileCount, nullTileCount: 0)
    }

    /// Why a region with NULL tiles is refused (a reader would serve an empty body as an image),
    /// naming the first; nil when every tile has data.
    public var nullTileProblem: String? {
        guard let firstNullTile else { return nil }
        guard nullTileCount > 1 else { return L.localized("tile %1$s (z/x/TMS row) has no data: its tile_data is NULL", "\(firstNullTile)") }
        return L.localized("tile %1$s (z/x/TMS row) has no data: its tile_data is NULL (and %2$s more)", "\(firstNullTile)", "\(nullTileCount - 1)")
    }

    /// Hashes the tiles of the MBTiles file at `path`, read through its `tiles` table or view.
    /// The pass runs under ``SQLiteDatabase/timeLimit(forPassOver:)`` of the file's size, unless
    /// `timeLimit` (seconds) says otherwise.
    /// `immutable`: see ``SQLiteDatabase/Mode/immutable`` (no side files beside a WAL-mode input).
    /// `bombCheck`: how far each compressed tile is looked into (``GzipBombCheck/Depth``).
    /// `declaredHex`: the tiles are checked and counted as always, but not digested, and the hash
    /// is this one (``TilesetHasher/init(declaredHex:)``): for a file whose bytes a signed SHA-256
    /// pins, where whoever signed it computed the hash (MD5 is most of the pass's time).
    /// `ltHash`: the tiles' ``TilesLtHash`` is computed in the same pass.
    public static func compute(
        ofFileAt path: String, timeLimit: Double? = nil, immutable: Bool = false, bombCheck: GzipBombCheck.Depth = .trailer, declaredHex: String? = nil,
        ltHash: Bool = false
    ) throws -> TilesetHash {
        guard FileManager.default.fileExists(atPath: path) else {
            throw DeltaError(path: path, reason: .missingFile)
        }
        let database = try SQLiteDatabase(path: path, mode: immutable ? .immutable : .readOnly)
        // One pass in key order: a small page cache is enough, and keeps `sync`'s memory low.
        // (A file that is no database fails below, with the reason.)
        try? database.execute("PRAGMA cache_size = -512")
        // Bounded: a `tiles` view can generate rows from nothing. No file holds more tiles than a
        // quarter of its size in bytes, and hashing runs under a time limit.
        let size = Int(FileManager.default.sizeOfItem(atPath: path))
        do {
            return try database.withTimeLimit(timeLimit ?? SQLiteDatabase.timeLimit(forPassOver: size)) {
                try compute(
                    in: database, schema: "main", path: path, maximumRows: max(16, size / 4), bombCheck: bombCheck, declaredHex: declaredHex, ltHash: ltHash)
            }
        } catch let error as SQLiteError {
            throw DeltaError(path: path, reason: .unsupported(error.message))
        }
    }

    /// Hashes `schema.tiles` on an open connection (the main database or an attached one), inside
    /// whatever transaction is open, so that it sees uncommitted changes.
    /// `ltHash`: the tiles' ``TilesLtHash`` is computed in the same pass.
    static func compute(
        in database: SQLiteDatabase, schema: String, path: String, maximumRows: Int = .max, bombCheck: GzipBombCheck.Depth = .trailer,
        declaredHex: String? = nil, ltHash: Bool = false
    ) throws -> TilesetHash {
        try TileStoreLayout.requireMBTiles(in: database, schema: schema, path: path)
        let statement = try database.prepare(
            """
            SELECT CAST(zoom_level AS TEXT), CAST(tile_column AS TEXT), CAST(tile_row AS TEXT), tile_data,
                   typeof(tile_data) IN ('integer', 'real')
            FROM "\(schema)".tiles ORDER BY zoom_level, tile_column, tile_row
            """)
        let hasher = try TilesetHasher(declaredHex: declaredHex, ltHash: ltHash)
        var rows = 0
        var previous: (z: Int64, x: Int64, y: Int64)?
        while try statement.step() {
            rows += 1
            if rows > maximumRows {
                throw DeltaError(path: path, reason: .unsupported(L.localized("its tiles table yields more rows than the file can hold (a view that makes them up?)")))
            }
            // Read as numbers (no string per row: this is the pass every sync and publish makes).
            let (z, x, y) = (statement.int64(0), statement.int64(1), statement.int64(2))
            // In key order, two rows for one tile come one after the other (a tiles table
            // without its unique index): which one a reader gets is SQLite's choice.
            if let previous, previous == (z, x, y) {
                // Where the index belongs: on `tiles`, or on `map` when `tiles` is a view over it.
                let kind = try? database.query(#"SELECT type FROM "\#(schema)".sqlite_master WHERE name = 'tiles'"#) { $0.text(0) }.first
                // Through a view, a tile_id in two rows of `images` gives its tile twice as well
                // (found by an attack: the advice named only the map table, which had its index).
                let advice =
                    kind == "view"
                    ? L.localized("the map table (which the tiles view reads) needs a unique index on (zoom_level, tile_column, tile_row), and the images table one on tile_id")
                    : L.localized("the tiles table needs a unique index on (zoom_level, tile_column, tile_row)")
                throw DeltaError(path: path, reason: .unsupported(L.localized("tile %1$s (z/x/TMS row) is stored twice: %2$s", "\(z)/\(x)/\(y)", advice)))
            }
            previous = (z, x, y)
            try checkRow(z: z, x: x, y: y, of: statement, path: path, bombCheck: bombCheck)
            try hasher.addRow(of: statement)
        }
        return try hasher.finalize()
    }

    /// Refuses the row `statement` stands on (columns: z, x, y, `tile_data`, whether `tile_data`
    /// is a number) as a region's tile: outside its zoom level's grid, compressed but not
    /// unpacking or unpacking too far (a gzip bomb), or a number instead of bytes. The checks of
    /// every tile at install, and of the tiles a delta writes (``MBTilesDelta/apply(delta:to:hashes:baseHash:flushesOnCommit:)``).
    static func checkRow(z: Int64, x: Int64, y: Int64, of statement: SQLiteStatement, path: String, bombCheck: GzipBombCheck.Depth = .trailer) throws {
        // A tile outside its zoom level's grid (GDAL's ogr2ogr writes 0/1/0) can never be
        // asked for: refused with the statement that removes such rows, never counted.
        if (0...30).contains(z), !(0..<(Int64(1) << z)).contains(x) || !(0..<(Int64(1) << z)).contains(y) {
            throw DeltaError(
                path: path, reason: .unsupported(
                    L.localized(
                        "tile %1$s (z/x/TMS row) lies outside zoom %2$s's grid (columns and rows 0 to %3$s): no client can ask for it; remove such rows with: %4$s",
                        "\(z)/\(x)/\(y)", "\(z)", "\((Int64(1) << z) - 1)",
                        "DELETE FROM tiles WHERE tile_column < 0 OR tile_row < 0 OR tile_column >= (1 << zoom_level) OR tile_row >= (1 << zoom_level)")))
        }
        try statement.withBlob(3) { bytes in
            switch GzipBombCheck.inspect(bytes, depth: bombCheck) {
            case .fine: break
            case .pastLimit:
                throw DeltaError(
                    path: path, reason: .unsupported(
                        L.localized(
                            "tile %1$s (z/x/TMS row) inflates to more than the %2$s MiB a server unpacks for a client without gzip (a gzip bomb?)",
                            "\(z)/\(x)/\(y)", "\(TileLimits.maximumUnpackedSize >> 20)")))
            case .corrupt(let reason):
                throw DeltaError(
                    path: path, reason: .unsupported(
                        L.localized("tile %1$s (z/x/TMS row) is compressed but does not unpack: %2$s", "\(z)/\(x)/\(y)", reason)))
            }
        }
        if statement.int(4) != 0 {
            let tile = [0, 1, 2].map { statement.text($0) ?? "NULL" }.joined(separator: "/")
            throw DeltaError(
                path: path, reason: .unsupported(L.localized("tile %1$s has a number as tile_data, not bytes: agg_tiles_hash is not defined for it", tile)))
        }
    }
}
