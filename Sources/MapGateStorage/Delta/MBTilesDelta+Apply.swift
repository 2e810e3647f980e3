import FoundationEssentials
import MapGateBase

extension MBTilesDelta {
    /// Applies the delta at `delta` to the MBTiles file at `base`, in place; the caller passes a
    /// copy it may lose.
    ///
    /// In one transaction, on a connection where neither file's triggers fire and within the time
    /// of ``SQLiteDatabase/timeLimit(forPassOver:)`` of both files' sizes:
    /// checks that the base's ``TilesetHash`` is the delta's `agg_tiles_hash_before_apply` (else
    /// ``DeltaError/Reason/baseMismatch(expected:actual:)``, nothing changed), writes and removes
    /// tiles and metadata, checks that the result's hash is `agg_tiles_hash_after_apply` (else
    /// ``DeltaError/Reason/resultMismatch(expected:actual:)``, everything rolled back) and stores
    /// it as the base's `agg_tiles_hash`.
    ///
    /// A de-duplicated base (`tiles` a view over `map` + `images`) stays de-duplicated: new tiles
    /// go to `images` under their MD5 id, and images no tile uses any more are removed. Changed
    /// tiles lose their UTFGrid link (`map.grid_id`), which the delta format does not carry.
    /// Deltas made by martin in any of its layouts are read (flat, flat-with-hash, normalized);
    /// its binary-diff deltas are refused.
    ///
    /// With `hashes: .byCaller` neither hash is computed here (each is a pass over every tile):
    /// the result's `agg_tiles_hash` is set to the delta's word, and the caller must hash the file
    /// afterwards (``TilesetHash/compute(ofFileAt:)``) and discard it unless the hash equals the
    /// summary's `targetHash`. `sync` does so on another thread while it validates the file.
    /// Unless the delta carries ``MBTilesDelta/ltHashChangeKey`` (mapgate's deltas do): the
    /// ``TilesLtHash`` of the file's rows at the places the delta names, after its writes minus
    /// before them, is then computed, in the time of the changed tiles, and its digest must be that key's (else
    /// ``DeltaError/Reason/resultTilesMismatch(expected:actual:)``, nothing kept); the summary's
    /// `resultChecked` says so, and the caller need not hash the file.
    /// That check sees every row the delta replaces, removes or writes, but not a base changed in
    /// rows it does not touch (which the MD5 of the whole result would see).
    /// `baseHash`, the base's hash as the caller knows it (recorded when it was installed), is then
    /// compared with the delta's `agg_tiles_hash_before_apply` before anything is written: a delta
    /// made for another base is refused as such, not only by the result's hash (found by an attack).
    ///
    /// With `flushesOnCommit: false` the transaction commits without fsync (`PRAGMA synchronous =
    /// OFF`) and without a rollback journal (`journal_mode = OFF`: a failure leaves the file
    /// half-changed): for a caller that applies to a copy of its own, discards it unless it checks
    /// out, and fsyncs the file itself before it keeps it (`sync` does, before the rename that
    /// installs it). A commit that fsyncs a file copied a moment before waits for the
    /// whole copy to reach the disk, not just the pages the delta changed.
    @discardableResult
    public static func apply(
        delta: String, to base: String, hashes: HashCheck = .inTransaction, baseHash: String? = nil, flushesOnCommit: Bool = true
    ) throws -> DeltaSummary {
        for path in [delta, base] where !FileManager.default.fileExists(atPath: path) {
            throw DeltaError(path: path, reason: .missingFile)
        }
        guard URL(fileURLWithPath: delta).standardized != URL(fileURLWithPath: base).standardized else {
            throw DeltaError(path: base, reason: .unsupported(L.localized("the delta and the file to apply it to are the same file")))
        }
        // A damaged delta must be named as the delta: attached to the base's connection, SQLite
        // would blame the connection's file (the base) for it.
        if let problem = SQLiteFileProbe.problem(at: delta) {
            throw DeltaError(path: delta, reason: .unsupported(problem))
        }
        let database = try SQLiteDatabase(path: base, mode: .readWrite)
        if !flushesOnCommit {
            // Nor a rollback journal: such a caller discards the copy unless it checks out, so the
            // journal only took room (found by an attack: on a nearly full disk the delta's apply
            // failed for the journal's pages, which the space check had not counted). Set before
            // the defensive flag, which refuses it (a journal-less file is at risk in a crash; a
            // scratch copy is thrown away then).
            _ = try database.query("PRAGMA main.journal_mode = OFF") { $0.text(0) }
        }
        // Both files come from outside: none of their triggers runs, and the whole apply is
        // bounded in time (a delta's `tiles` may be a view that never ends).
        try database.distrustSchema()
        try TileStoreLayout.requireMBTiles(in: database, schema: "main", path: base)
        let layout = try TileStoreLayout.detect(in: database, schema: "main", path: base)
        try database.execute("ATTACH DATABASE ? AS delta", [.text(delta)])
        // Small page caches: apply streams through both files once, and `sync` runs it with a
        // memory budget. Dirty pages beyond the cache go to the file (a copy) early; no harm.
        try database.execute("PRAGMA main.cache_size = -1024; PRAGMA delta.cache_size = -256")
        if !flushesOnCommit { try database.execute("PRAGMA main.synchronous = OFF") }
        let file = try DeltaFile.inspect(in: database, schema: "delta", path: delta)
        if let baseHash, file.baseHash.uppercased() != baseHash.uppercased() {
            throw DeltaError(path: delta, reason: .baseMismatch(expected: file.baseHash, actual: baseHash))
        }
        try database.registerMD5HexFunction()

        let size = FileManager.default.sizeOfItem(atPath: base) + FileManager.default.sizeOfItem(atPath: delta)
        return try database.withTimeLimit(SQLiteDatabase.timeLimit(forPassOver: Int(size))) { try database.transaction(.immediate) {
            if hashes == .inTransaction {
                let before = try TilesetHash.compute(in: database, schema: "main", path: base)
                guard before.hex == file.baseHash else {
                    throw DeltaError(path: delta, reason: .baseMismatch(expected: file.baseHash, actual: before.hex))
                }
            }
            // The rows' multiset hash at the places the delta names: after its writes minus
            // before them, which must be the target's minus the base's. What landed in the file is
            // read back, not the delta's rows (found by an attack: in a normalized file whose
            // image id was stale, a new tile was pointed at the stale image's other bytes, while
            // the delta's own rows gave the right sum).
            let checksLtHash = hashes == .byCaller && file.ltHashChange != nil
            if checksLtHash { try database.execute(checkedPlacesSQL(layout: layout, rows: file.rowsSQL)) }
            let before = checksLtHash ? try checkedRows(database, path: delta, checkingTiles: false) : nil
            try writeTiles(database, layout: layout, rows: file.rowsSQL)
            var tileCountChange: Int?
            if let before, let expected = file.ltHashChange {
                let after = try checkedRows(database, path: delta, checkingTiles: true)
                var change = after.hash
                change.remove(before.hash)
                // Counted only where `tiles` is the table written: through a view over `map` and
                // `images`, rows outside the checked places can appear (a view's own join, an id
                // column with another collation; found by an attack), which only a pass sees.
                if layout == .flat { tileCountChange = after.count - before.count }
                let actual = try change.digest
                guard actual == expected else {
                    throw DeltaError(path: delta, reason: .resultTilesMismatch(expected: String(expected.prefix(16)), actual: String(actual.prefix(16))))
                }
                try database.execute("DROP TABLE temp.mapgate_checked_places")
            }
            try writeMetadata(database)
            if hashes == .inTransaction {
                let after = try TilesetHash.compute(in: database, schema: "main", path: base)
                guard after.hex == file.targetHash else {
                    throw DeltaError(path: delta, reason: .resultMismatch(expected: file.targetHash, actual: after.hex))
                }
            }
            try database.execute("DELETE FROM main.metadata WHERE name IN \(reservedKeysSQL)")
            try database.execute("INSERT INTO main.metadata (name, value) VALUES (?, ?)", [.text(hashKey), .text(file.targetHash)])
            var summary = try summary(database, schema: "delta", tilesSQL: file.rowsSQL)
            summary.resultChecked = before != nil
            summary.tileCountChange = tileCountChange
            return summary
        } }
    }

    /// Makes `temp.mapgate_checked_places`: every place whose tile the apply can change. The
    /// places the delta's `rows` name; in a normalized file also those whose `map` row uses an
    /// image id the delta's tiles get, which a new image makes visible through the `tiles` view
    /// (found by an attack: a `map` row left pointing at no image in an earlier version showed a
    /// tile no version has once the delta added an image of that id).
    private static func checkedPlacesSQL(layout: TileStoreLayout, rows: String) -> String {
        let md5 = SQLiteDatabase.md5HexFunction
        let named = "SELECT zoom_level, tile_column, tile_row FROM (\(rows))"
        let sharing: String
        switch layout {
        case .flat, .flatWithHash:
            sharing = ""
        case .normalized(let lowercaseIDs):
            let id = lowercaseIDs ? "lower(\(md5)(tile_data))" : "\(md5)(tile_data)"
            sharing = " UNION SELECT zoom_level, tile_column, tile_row FROM main.map WHERE tile_id IN (SELECT \(id) FROM (\(givenSQL(rows))))"
        case .zoomKeyedImages:
            sharing =
                " UNION SELECT zoom_level, tile_column, tile_row FROM main.map WHERE (zoom_level, tile_id) IN (SELECT zoom_level, lower(\(md5)(tile_data)) FROM (\(givenSQL(rows))))"
        }
        // (not translated: SQL)
        return "CREATE TEMP TABLE mapgate_checked_places AS \(named)\(sharing)"
    }

    /// The ``TilesLtHash`` of the rows of `main.tiles` at the places of
    /// `temp.mapgate_checked_places` (before the delta's writes, and after them), and how many
    /// there are. `checkingTiles`: each is checked as every tile is at install
    /// (``TilesetHash/checkRow(z:x:y:of:path:bombCheck:)``, and not NULL), so that the result
    /// need not be passed over whole (the rest of it is the base, checked at its install).
    /// `path` names the delta in an error.
    private static func checkedRows(_ database: SQLiteDatabase, path: String, checkingTiles: Bool) throws -> (hash: TilesLtHash, count: Int) {
        var state = TilesLtHash()
        var count = 0
        let hasher = try TilesLtHash.RowHasher()
        // Hashed as numbers: a coordinate stored as text ('5abc') would hash as the tile 5 it is
        // not, in a row no client asks for (the MD5 of the result, which hashes it as text, would
        // have seen it): refused.
        let named = try database.prepare(
            """
            SELECT zoom_level, tile_column, tile_row, tile_data, typeof(tile_data) IN ('integer', 'real'),
                   typeof(zoom_level) = 'integer' AND typeof(tile_column) = 'integer' AND typeof(tile_row) = 'integer'
            FROM main.tiles
            WHERE (zoom_level, tile_column, tile_row) IN (SELECT zoom_level, tile_column, tile_row FROM temp.mapgate_checked_places)
            """)
        while try named.step() {
            let tile = { [0, 1, 2].map { named.text(Int32($0)) ?? "NULL" }.joined(separator: "/") }
            guard named.int(5) != 0 else {
                throw DeltaError(path: path, reason: .unsupported(L.localized("tile %1$s of the delta has a coordinate that is not an integer", tile())))
            }
            if checkingTiles {
                guard !named.isNull(3) else {
                    throw DeltaError(path: path, reason: .unsupported(L.localized("tile %1$s (z/x/TMS row) has no data: its tile_data is NULL", tile())))
                }
                try TilesetHash.checkRow(z: named.int64(0), x: named.int64(1), y: named.int64(2), of: named, path: path)
            }
            state.add(try hasher.lanes(of: named))
            count += 1
        }
        // A place given twice (a delta's rows without a key, over a base without the unique
        // index a pass would have asked for; found by an attack): refused as the pass refuses it.
        if checkingTiles,
            let twice = try database.query(
                """
                SELECT zoom_level || '/' || tile_column || '/' || tile_row FROM main.tiles
                WHERE (zoom_level, tile_column, tile_row) IN (SELECT zoom_level, tile_column, tile_row FROM temp.mapgate_checked_places)
                GROUP BY zoom_level, tile_column, tile_row HAVING count(*) > 1 LIMIT 1
                """, read: { $0.text(0) }
            ).first
        {
            throw DeltaError(
                path: path,
                reason: .unsupported(
                    L.localized(
                        "tile %1$s (z/x/TMS row) is stored twice: %2$s", twice ?? "?",
                        L.localized("the tiles table needs a unique index on (zoom_level, tile_column, tile_row)"))))
        }
        return (state, count)
    }

    /// The condition on `(zoom_level, tile_column, tile_row)` of a tile the delta's `rows` name.
    private static func namedSQL(_ rows: String) -> String {
        "(zoom_level, tile_column, tile_row) IN (SELECT zoom_level, tile_column, tile_row FROM (\(rows)))"
    }

    /// The delta's rows that give a tile's bytes (not a removal).
    private static func givenSQL(_ rows: String) -> String {
        "SELECT zoom_level, tile_column, tile_row, tile_data FROM (\(rows)) WHERE tile_data IS NOT NULL"
    }

    /// Who checks the base's and the result's tile hashes.
    public enum HashCheck: Sendable {
        /// `apply` itself, inside its transaction: a mismatch rolls everything back.
        case inTransaction
        /// The caller, after `apply` returns (see ``apply(delta:to:hashes:)``).
        case byCaller
    }

    /// Removes every tile the delta names, then inserts those it gives bytes for.
    private static func writeTiles(_ database: SQLiteDatabase, layout: TileStoreLayout, rows: String) throws {
        let named = namedSQL(rows)
        let given = givenSQL(rows)
        let md5 = SQLiteDatabase.md5HexFunction
        switch layout {
        case .flat:
            try database.execute("DELETE FROM main.tiles WHERE \(named)")
            try database.execute(
                "INSERT INTO main.tiles (zoom_level, tile_column, tile_row, tile_data) \(given)")
        case .flatWithHash:
            try database.execute("DELETE FROM main.tiles_with_hash WHERE \(named)")
            try database.execute(
                """
                INSERT INTO main.tiles_with_hash (zoom_level, tile_column, tile_row, tile_data, tile_hash)
                SELECT zoom_level, tile_column, tile_row, tile_data, \(md5)(tile_data) FROM (\(given))
                """)
        case .normalized(let lowercaseIDs):
            let id = lowercaseIDs ? "lower(\(md5)(tile_data))" : "\(md5)(tile_data)"
            // Remember which images the replaced tiles used: those no tile uses afterwards go.
            try database.execute(
                """
                CREATE TEMP TABLE mapgate_replaced_images (tile_id TEXT);
                INSERT INTO temp.mapgate_replaced_images
                    SELECT DISTINCT tile_id FROM main.map WHERE tile_id IS NOT NULL AND \(named);
                DELETE FROM main.map WHERE \(named);
                INSERT INTO main.images (tile_id, tile_data)
                    SELECT id, tile_data FROM (SELECT \(id) AS id, tile_data FROM (\(given)))
                    WHERE id NOT IN (SELECT tile_id FROM main.images WHERE tile_id IS NOT NULL)
                    GROUP BY id;
                INSERT INTO main.map (zoom_level, tile_column, tile_row, tile_id)
                    SELECT zoom_level, tile_column, tile_row, \(id) FROM (\(given));
                DELETE FROM main.images
                    WHERE tile_id IN (SELECT tile_id FROM temp.mapgate_replaced_images)
                      AND tile_id NOT IN (SELECT tile_id FROM main.map WHERE tile_id IS NOT NULL);
                DROP TABLE temp.mapgate_replaced_images;
                """)
        case .zoomKeyedImages:
            // tippecanoe 2.x: an image is (zoom_level, tile_id); ids are unique per zoom level only.
            let id = "lower(\(md5)(tile_data))"
            try database.execute(
                """
                CREATE TEMP TABLE mapgate_replaced_images (zoom_level INTEGER, tile_id TEXT);
                INSERT INTO temp.mapgate_replaced_images
                    SELECT DISTINCT zoom_level, tile_id FROM main.map WHERE tile_id IS NOT NULL AND \(named);
                DELETE FROM main.map WHERE \(named);
                INSERT INTO main.images (zoom_level, tile_id, tile_data)
                    SELECT zoom_level, id, tile_data FROM (SELECT zoom_level, \(id) AS id, tile_data FROM (\(given))) AS new
                    WHERE NOT EXISTS (SELECT 1 FROM main.images AS old WHERE old.zoom_level = new.zoom_level AND old.tile_id = new.id)
                    GROUP BY zoom_level, id;
                INSERT INTO main.map (zoom_level, tile_column, tile_row, tile_id)
                    SELECT zoom_level, tile_column, tile_row, \(id) FROM (\(given));
                DELETE FROM main.images
                    WHERE (zoom_level, tile_id) IN (SELECT zoom_level, tile_id FROM temp.mapgate_replaced_images)
                      AND (zoom_level, tile_id) NOT IN (SELECT zoom_level, tile_id FROM main.map WHERE tile_id IS NOT NULL);
                DROP TABLE temp.mapgate_replaced_images;
                """)
        }
    }

    /// Replaces or removes every metadata entry the delta names (except the hash keys).
    private static func writeMetadata(_ database: SQLiteDatabase) throws {
        try database.execute(
            """
            DELETE FROM main.metadata WHERE name IN
                (SELECT name FROM delta.metadata WHERE name IS NOT NULL AND name NOT IN \(reservedKeysSQL));
            INSERT INTO main.metadata (name, value)
                SELECT name, value FROM delta.metadata
                WHERE name IS NOT NULL AND value IS NOT NULL AND name NOT IN \(reservedKeysSQL);
            """)
    }
}
