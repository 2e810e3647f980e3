import FoundationEssentials
import MapGateBase

/// What apply needs to know about a delta file attached to the connection.
struct DeltaFile {
    let baseHash: String
    let targetHash: String
    /// ``MBTilesDelta/ltHashChangeKey``, when the delta carries it (mapgate's own deltas do); nil
    /// otherwise, and when it is not 64 lowercase hex digits (the result is then checked by its
    /// MD5, as a delta from another tool is).
    let ltHashChange: String?
    /// `SELECT zoom_level, tile_column, tile_row, tile_data` over the delta's rows, NULL data for removals.
    let rowsSQL: String

    static func inspect(in database: SQLiteDatabase, schema: String, path: String) throws -> DeltaFile {
        let objects = try TileStoreLayout.objectTypes(in: database, schema: schema, path: path)
        // Only tables are read, never views: every layout martin writes has its rows in tables,
        // and a view can compute rows without end (a recursive CTE) out of a few bytes. Read
        // from tables, the work is bounded by the file's size.
        guard objects["metadata"] == "table" else {
            throw DeltaError(path: path, reason: .notADelta(objects["metadata"] == nil ? "no metadata table" : "metadata is a view, not a table"))
        }
        if objects["bsdiffraw"] != nil || objects["bsdiffrawgz"] != nil {
            throw DeltaError(
                path: path, reason: .unsupported(L.localized("binary-diff deltas (martin's --patch-type bin-diff-*) are not supported")))
        }
        var hashes: [String] = []
        for key in [MBTilesDelta.beforeApplyKey, MBTilesDelta.afterApplyKey] {
            guard let value = try TileStoreLayout.metadataValue(key, in: database, schema: schema) else {
                throw DeltaError(path: path, reason: .notADelta(L.localized("no %1$s in its metadata", key)))
            }
            // Newer martin can hash with fnv1a, xxh64 or xxh3 (its hash_algorithm key); those
            // values are not 32 hex digits and end up here. Quoted cut short (found by an attack: a
            // million-character value made a line of a megabyte).
            guard value.count == 32, value.allSatisfy(\.isHexDigit) else {
                let shown = TerminalText.capped(value, codePoints: 64)
                throw DeltaError(path: path, reason: .notADelta(L.localized("%1$s is \"%2$s\", not an MD5 hash", key, shown)))
            }
            hashes.append(value.uppercased())
        }
        // As written: 64 lowercase ASCII hex digits (found by an attack: `isHexDigit` took a
        // full-width "ａ", and a good delta was refused as made wrong instead of checked by MD5).
        let change = try TileStoreLayout.metadataValue(MBTilesDelta.ltHashChangeKey, in: database, schema: schema).flatMap { $0.isSHA256Hex ? $0 : nil }
        return DeltaFile(
            baseHash: hashes[0], targetHash: hashes[1], ltHashChange: change, rowsSQL: try rowsSQL(in: database, schema: schema, objects: objects, path: path))
    }

    /// martin writes a delta in its base's layout; removals in a normalized one are `map` rows
    /// without an image, which the `tiles` view (an inner join) would hide.
    private static func rowsSQL(
        in database: SQLiteDatabase, schema: String, objects: [String: String], path: String
    ) throws -> String {
        let coordinates = TileStoreLayout.coordinateColumns
        if objects["map"] == "table", objects["images"] == "table",
            try TileStoreLayout.columns(of: "map", in: database, schema: schema).isSuperset(of: coordinates.union(["tile_id"])),
            try TileStoreLayout.columns(of: "images", in: database, schema: schema).isSuperset(of: ["tile_id", "tile_data"])
        {
            // (not translated: SQL)
            return """
                SELECT m.zoom_level AS zoom_level, m.tile_column AS tile_column, m.tile_row AS tile_row,
                       i.tile_data AS tile_data
                FROM "\(schema)".map AS m LEFT JOIN "\(schema)".images AS i ON i.tile_id = m.tile_id
                """
        }
        for table in ["tiles_with_hash", "tiles"] where objects[table] == "table" {
            guard try TileStoreLayout.columns(of: table, in: database, schema: schema).isSuperset(of: coordinates.union(["tile_data"]))
            else { continue }
            // (not translated: SQL)
            return "SELECT zoom_level, tile_column, tile_row, tile_data FROM \"\(schema)\".\(table)"
        }
        throw DeltaError(
            path: path, reason: .notADelta(
                "no table of tiles with zoom_level, tile_column, tile_row and tile_data (tiles, tiles_with_hash, or map + images; views are not read)"))
    }
}
