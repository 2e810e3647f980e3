import FoundationEssentials
import MapGateBase

/// Tile-level deltas between two MBTiles files, in the format of martin's `mbtiles diff` and
/// `mbtiles apply-patch`.
///
/// A delta is itself an MBTiles file with a plain `tiles` table and a `metadata` table:
/// - a tile added or changed from base to target is a row with the target's `tile_data`; a tile
///   the target lacks is a row whose `tile_data` is NULL (rows are TMS, as MBTiles stores them);
/// - a metadata entry added or changed is a row with the target's value; one the target lacks is a
///   row whose `value` is NULL;
/// - `agg_tiles_hash_before_apply` and `agg_tiles_hash_after_apply` hold the ``TilesetHash`` of
///   base and target, and `agg_tiles_hash` that of the delta's own tiles;
/// - mapgate adds `mapgate_lthash16_change`, the SHA-256 of the difference between the target's
///   and the base's ``TilesLtHash`` (martin and other tools ignore it, and a delta without it is
///   applied and checked as before).
///
/// Both hashes are computed from the tiles, never taken from the files' stored `agg_tiles_hash`.
public enum MBTilesDelta {
    /// martin's metadata key for a tileset's own hash.
    public static let hashKey = "agg_tiles_hash"
    /// The hash a delta's base must have.
    public static let beforeApplyKey = "agg_tiles_hash_before_apply"
    /// The hash the result of applying a delta must have.
    public static let afterApplyKey = "agg_tiles_hash_after_apply"

    /// mapgate's own: the ``TilesLtHash/changeDigest(from:)`` of the target's tiles from the
    /// base's, each hashed whole, with which a client checks the result of applying the delta in
    /// the time of its changed tiles.
    public static let ltHashChangeKey = "mapgate_lthash16_change"

    /// Keys no result gets from a delta, nor any delta from its inputs.
    static var reservedKeysSQL: String { "('\(hashKey)', '\(beforeApplyKey)', '\(afterApplyKey)', '\(ltHashChangeKey)')" }

    /// Writes the delta that turns `base` into `target` to a new file at `output`.
    ///
    /// Both inputs are read through their `tiles` table or view, so de-duplicated files work.
    /// `output` must not exist; on failure no output is left behind.
    @discardableResult
    public static func make(from base: String, to target: String, output: String) throws -> DeltaSummary {
        for path in [base, target] where !FileManager.default.fileExists(atPath: path) {
            throw DeltaError(path: path, reason: .missingFile)
        }
        guard !FileManager.default.fileExists(atPath: output) else {
            throw DeltaError(path: output, reason: .outputExists)
        }
        do {
            return try writeDelta(from: base, to: target, output: output)
        } catch {
            // The connection is closed by now; remove the partial output and its journal.
            for suffix in ["", "-journal", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: output + suffix)
            }
            throw error
        }
    }

    private static func writeDelta(from base: String, to target: String, output: String) throws -> DeltaSummary {
        // Said before SQLite's ATTACH says it in its own words (found by an attack). A file that
        // is no database at all is said so below, as before.
        for path in [base, target] {
            let rows = try? SQLiteDatabase(path: path, mode: .immutable).query("PRAGMA encoding") { $0.text(0) }
            if let encoding = rows?.first ?? nil, encoding != "UTF-8" {
                throw DeltaError(path: path, reason: .textEncoding(encoding))
            }
        }
        let database = try SQLiteDatabase(path: output, mode: .readWriteCreate)
        try database.execute("ATTACH DATABASE ? AS base", [.text(base)])
        try database.execute("ATTACH DATABASE ? AS target", [.text(target)])
        for (schema, path) in [("base", base), ("target", target)] {
            try TileStoreLayout.requireMBTiles(in: database, schema: schema, path: path)
            for key in [beforeApplyKey, afterApplyKey] {
                if try TileStoreLayout.metadataValue(key, in: database, schema: schema) != nil {
                    throw DeltaError(path: path, reason: .isADelta)
                }
            }
            // A whole number stored as REAL (3.0) hashes as "3.0"; the delta's rows land in the
            // base as it types them, and the result never gives the declared hash (found by an
            // attack: the delta was made, failed its check, and the note said only that).
            let real = try database.query(
                "SELECT count(*) FROM \(schema).tiles WHERE typeof(tile_column) = 'real' OR typeof(tile_row) = 'real'") { $0.int(0) }.first ?? 0
            if real > 0 { throw DeltaError(path: path, reason: .realCoordinates(real)) }
        }
        // One transaction: the hashes and the differences come from the same snapshot of both inputs.
        return try database.transaction(.immediate) {
            let baseHash = try TilesetHash.compute(in: database, schema: "base", path: base, ltHash: true)
            let targetHash = try TilesetHash.compute(in: database, schema: "target", path: target, ltHash: true)
            if targetHash.nullTileCount > 0 {
                throw DeltaError(
                    path: target, reason: .unsupported(
                        L.localized("%1$s tiles have a NULL tile_data, which a delta cannot carry (NULL means removed)", "\(targetHash.nullTileCount)")))
            }
            try database.execute(
                """
                CREATE TABLE metadata (name TEXT NOT NULL PRIMARY KEY, value TEXT);
                CREATE TABLE tiles (
                    zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                    tile_data BLOB,
                    PRIMARY KEY (zoom_level, tile_column, tile_row));
                """)
            try writeTileDifferences(database)
            try writeMetadataDifferences(database)
            let ownHash = try TilesetHash.compute(in: database, schema: "main", path: output)
            // Asked for in both passes above, so both are there.
            guard let baseLtHash = baseHash.ltHash, let targetLtHash = targetHash.ltHash else { preconditionFailure("TilesetHash.compute(ltHash: true) gave no LtHash") }
            try database.execute(
                "INSERT INTO metadata (name, value) VALUES (?, ?), (?, ?), (?, ?), (?, ?)",
                [
                    .text(beforeApplyKey), .text(baseHash.hex), .text(afterApplyKey), .text(targetHash.hex),
                    .text(hashKey), .text(ownHash.hex),
                    .text(ltHashChangeKey), .text(try TilesLtHash.changeDigest(from: baseLtHash, to: targetLtHash)),
                ])
            return try summary(database, schema: "main", tilesSQL: "SELECT tile_data FROM main.tiles")
        }
    }

    /// Tiles new or different in the target (with its bytes), then tiles only in the base (NULL).
    private static func writeTileDifferences(_ database: SQLiteDatabase) throws {
        let sameTile = "b.zoom_level = t.zoom_level AND b.tile_column = t.tile_column AND b.tile_row = t.tile_row"
        try database.execute(
            """
            INSERT INTO main.tiles (zoom_level, tile_column, tile_row, tile_data)
            SELECT t.zoom_level, t.tile_column, t.tile_row, t.tile_data FROM target.tiles AS t
            WHERE NOT EXISTS (SELECT 1 FROM base.tiles AS b WHERE \(sameTile) AND b.tile_data IS t.tile_data)
            """)
        try database.execute(
            """
            INSERT INTO main.tiles (zoom_level, tile_column, tile_row, tile_data)
            SELECT b.zoom_level, b.tile_column, b.tile_row, NULL FROM base.tiles AS b
            WHERE NOT EXISTS (SELECT 1 FROM target.tiles AS t WHERE \(sameTile))
            """)
    }

    /// Entries new or different in the target (with its value), then names only in the base (NULL).
    /// The hash keys are not compared: they are written afterwards.
    private static func writeMetadataDifferences(_ database: SQLiteDatabase) throws {
        try database.execute(
            """
            INSERT OR REPLACE INTO main.metadata (name, value)
            SELECT t.name, t.value FROM target.metadata AS t
            WHERE t.name IS NOT NULL AND t.name NOT IN \(reservedKeysSQL)
              AND NOT EXISTS (SELECT 1 FROM base.metadata AS b WHERE b.name = t.name AND b.value IS t.value)
            """)
        try database.execute(
            """
            INSERT OR IGNORE INTO main.metadata (name, value)
            SELECT b.name, NULL FROM base.metadata AS b
            WHERE b.name IS NOT NULL AND b.name NOT IN \(reservedKeysSQL)
              AND NOT EXISTS (SELECT 1 FROM target.metadata AS t WHERE t.name = b.name)
            """)
    }

    /// Counts what the delta in `schema` holds; `tilesSQL` selects its rows' `tile_data`.
    static func summary(_ database: SQLiteDatabase, schema: String, tilesSQL: String) throws -> DeltaSummary {
        let tiles = try database.query(
            "SELECT count(tile_data), count(*) - count(tile_data) FROM (\(tilesSQL))"
        ) { ($0.int(0), $0.int(1)) }.first ?? (0, 0)
        let metadata = try database.query(
            """
            SELECT count(value), count(*) - count(value) FROM "\(schema)".metadata
            WHERE name IS NOT NULL AND name NOT IN \(reservedKeysSQL)
            """
        ) { ($0.int(0), $0.int(1)) }.first ?? (0, 0)
        return DeltaSummary(
            baseHash: try TileStoreLayout.metadataValue(beforeApplyKey, in: database, schema: schema) ?? "",
            targetHash: try TileStoreLayout.metadataValue(afterApplyKey, in: database, schema: schema) ?? "",
            tilesWritten: tiles.0, tilesRemoved: tiles.1, metadataWritten: metadata.0, metadataRemoved: metadata.1)
    }
}
