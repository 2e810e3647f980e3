import FoundationEssentials
import MapGateBase

/// How an MBTiles file stores its tiles, as far as writing tiles into it is concerned.
enum TileStoreLayout: Equatable {
    /// `tiles` is a table.
    case flat
    /// `tiles` is a view over `map` (coordinates and `tile_id`) and `images` (`tile_id`,
    /// `tile_data`): the de-duplicated schema of tilelive, node-mbtiles and martin.
    /// `lowercaseIDs` tells whether the file writes its MD5 tile ids in lower case (tilelive does).
    case normalized(lowercaseIDs: Bool)
    /// `tiles` is a view over `map` and `images` joined on `zoom_level` *and* `tile_id`, with
    /// `UNIQUE (zoom_level, tile_id)` on `images`: tippecanoe 2.x's layout, whose ids are its own
    /// hashes, unique per zoom level only. New images go in under their zoom level.
    case zoomKeyedImages
    /// `tiles` is a view over martin's `tiles_with_hash` table (tiles plus the MD5 of each).
    case flatWithHash

    static let coordinateColumns: Set<String> = ["zoom_level", "tile_column", "tile_row"]

    /// Finds how `schema`'s tiles can be written, or says why they cannot.
    static func detect(in database: SQLiteDatabase, schema: String, path: String) throws -> TileStoreLayout {
        let objects = try objectTypes(in: database, schema: schema, path: path)
        guard objects["metadata"] == "table" else {
            throw DeltaError(path: path, reason: .unsupported(L.localized("metadata is a view, not a table: it cannot be updated")))
        }
        if objects["tiles"] == "table" { return .flat }
        if objects["map"] == "table", objects["images"] == "table",
            try columns(of: "map", in: database, schema: schema).isSuperset(of: coordinateColumns.union(["tile_id"])),
            try columns(of: "images", in: database, schema: schema).isSuperset(of: ["tile_id", "tile_data"])
        {
            if try columns(of: "images", in: database, schema: schema).contains("zoom_level") { return .zoomKeyedImages }
            // A sample of ids decides their case; martin writes upper case, tilelive lower case.
            let lowercase = try database.query(
                """
                SELECT count(*) FROM (SELECT tile_id FROM "\(schema)".images WHERE tile_id IS NOT NULL LIMIT 100)
                WHERE tile_id != upper(tile_id)
                """
            ) { $0.int(0) }.first ?? 0
            return .normalized(lowercaseIDs: lowercase > 0)
        }
        if objects["tiles_with_hash"] == "table",
            try columns(of: "tiles_with_hash", in: database, schema: schema)
                .isSuperset(of: coordinateColumns.union(["tile_data", "tile_hash"]))
        {
            return .flatWithHash
        }
        let met = objects.filter { $0.value == "table" }.keys.sorted().joined(separator: ", ")
        throw DeltaError(
            path: path, reason: .unsupported(
                L.localized(
                    "tiles is a view over tables mapgate does not know how to update (it has the tables %1$s; mapgate updates a flat tiles table, map + images as mbutil, tilelive, martin and tippecanoe 2.x write them, and martin's tiles_with_hash)",
                    met)))
    }

    /// Throws unless `schema` has a `tiles` and a `metadata` table or view.
    static func requireMBTiles(in database: SQLiteDatabase, schema: String, path: String) throws {
        let objects = try objectTypes(in: database, schema: schema, path: path)
        for required in ["tiles", "metadata"] where objects[required] == nil {
            throw DeltaError(path: path, reason: .notMBTiles("no \(required) table or view"))
        }
    }

    /// The tables and views of `schema`, name to type. A file that is no SQLite database at all
    /// fails here, as not an MBTiles file.
    static func objectTypes(in database: SQLiteDatabase, schema: String, path: String) throws -> [String: String] {
        do {
            let rows = try database.query(
                "SELECT name, type FROM \"\(schema)\".sqlite_master WHERE type IN ('table', 'view')"
            ) { ($0.text(0) ?? "", $0.text(1) ?? "") }
            return Dictionary(rows, uniquingKeysWith: { first, _ in first })
        } catch let error as SQLiteError where error.isIOError {
            throw error  // the disk failed a read (EIO), which says nothing of the file's bytes
        } catch let error as SQLiteError {
            throw DeltaError(path: path, reason: .notMBTiles("not a readable SQLite file: \(error.message)"))
        }
    }

    static func columns(of table: String, in database: SQLiteDatabase, schema: String) throws -> Set<String> {
        Set(try database.query("SELECT name FROM pragma_table_info(?, ?)", [.text(table), .text(schema)]) { $0.text(0) ?? "" })
    }

    /// One metadata value of `schema`, nil when the name is missing (or its value is NULL).
    static func metadataValue(_ name: String, in database: SQLiteDatabase, schema: String) throws -> String? {
        try database.query(
            "SELECT value FROM \"\(schema)\".metadata WHERE name = ? AND value IS NOT NULL LIMIT 1", [.text(name)]
        ) { $0.text(0) }.first ?? nil
    }
}
