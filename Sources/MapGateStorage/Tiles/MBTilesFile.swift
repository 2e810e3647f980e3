import FoundationEssentials
import MapGateBase

/// An MBTiles file that cannot be used, with the reason.
public struct MBTilesError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let path: String
    public let reason: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? { "\(path): \(reason)" }
}

/// A read-only MBTiles file (MBTiles 1.3): metadata, zoom range, tiles by XYZ coordinates.
///
/// `tiles` and `metadata` may be tables or views (the de-duplicated `map` + `images` schema).
/// Not `Sendable`: it owns a SQLite connection confined to one thread.
public final class MBTilesFile {
    public let path: String
    private let database: SQLiteDatabase
    /// The tile query, prepared on first use and kept once prepared. A failure to prepare is
    /// thrown with its reason and tried again next time, never kept for the connection's life.
    private var preparedTileStatement: SQLiteStatement?

    /// Opens `path` read-only and checks that it is an MBTiles file at all.
    ///
    /// - Parameters:
    ///   - immutable: the file will not change while open (see ``SQLiteDatabase/Mode/immutable``).
    ///   - source: what to open, when not `path` itself: a ``HeldFile``'s `/proc/self/fd/N`
    ///     (errors still name `path`).
    public init(path: String, immutable: Bool = false, openingThrough source: String? = nil) throws {
        self.path = path
        let source = source ?? path
        // A FIFO or a device in a file's place is said as what it is ("is a FIFO, not a regular
        // file"), not as SQLite's "unable to open". (What keeps SQLite's own open from blocking on
        // one, whenever it is swapped in, is ``SQLiteDatabase``'s open hook; a missing file is
        // SQLite's to say, as before.)
        if FileManager.default.fileExists(atPath: source) {
            do {
                _ = try RegularFile(forReadingAtPath: source)
            } catch {
                throw MBTilesError(path: path, reason: error.reason)
            }
        }
        do {
            database = try SQLiteDatabase(path: source, mode: immutable ? .immutable : .readOnly)
            // A server keeps one connection per worker and region: each keeps a small private
            // page cache, and the OS page cache holds the file once for all of them.
            try database.execute("PRAGMA cache_size = -256")
            let objects = try database.query(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name IN ('tiles', 'metadata')"
            ) { $0.text(0) ?? "" }
            for required in ["tiles", "metadata"] where !objects.contains(required) {
                throw MBTilesError(path: path, reason: L.localized("not an MBTiles file: no %1$s table or view", "\(required)"))
            }
        } catch let error as SQLiteError where error.isIOError {
            throw error  // the disk failed a read (EIO), which says nothing of the file's bytes
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: SQLiteFileProbe.reason(error.message, path: source))
        }
    }

    /// The table whose `tile_row` holds the rows: `tiles`, or, where `tiles` is a view over the
    /// node-mbtiles layout (`map` and `images`, as TileMill writes), `map`; for the advice that
    /// tells a publisher how to flip XYZ rows (an UPDATE of a view fails).
    public func rowTable() throws -> String {
        let isView = try database.query("SELECT type FROM sqlite_master WHERE name = 'tiles'") { $0.text(0) ?? "" }.first == "view"
        let mapHasRows = try database.query("SELECT COUNT(*) FROM pragma_table_info('map') WHERE name = 'tile_row'") { $0.int(0) }.first == 1
        return isView && mapHasRows ? "map" : "tiles"
    }

    /// `PRAGMA quick_check`; throws with SQLite's first complaint. An I/O error (`SQLITE_IOERR`:
    /// the disk, not the file) is thrown as itself: it says nothing of the file's integrity.
    public func checkIntegrity() throws {
        do {
            let result = try database.query("PRAGMA quick_check") { $0.text(0) ?? "" }
            guard result == ["ok"] else {
                throw MBTilesError(path: path, reason: L.localized("integrity check failed: %1$s", "\(result.prefix(3).joined(separator: "; "))"))
            }
        } catch let error as SQLiteError where error.isIOError {
            throw error
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: L.localized("integrity check failed: %1$s", "\(error.message)"))
        }
    }

    /// The `metadata` table as a dictionary.
    /// The longest metadata value kept: 1 MiB for `json` (a vector region's `vector_layers`),
    /// 16 KiB for any other key. Longer values are left out, so a 50 MB `description` never
    /// reaches TileJSON, the viewer or the terminal.
    public static func metadataLimit(for name: String) -> Int { name == "json" ? 1 << 20 : 16 << 10 }

    /// The metadata names given more than once with different values, with those values (sorted):
    /// ``metadata()`` keeps the last, which a publisher may not have meant. Names and
    /// values are compared as the text ``metadata()`` reads, byte for byte: `0` and `'0'` are one
    /// value, a name stored as a blob is the name its bytes spell, and a column's `COLLATE
    /// NOCASE` does not make `version` and `VERSION` one name (found by an attack).
    public func conflictingMetadata() throws -> [(name: String, values: [String])] {
        let rows = try wrap {
            try database.query(
                """
                WITH rows AS (SELECT CAST(name AS TEXT) COLLATE BINARY AS name, CAST(value AS TEXT) COLLATE BINARY AS value
                              FROM metadata WHERE name IS NOT NULL AND value IS NOT NULL)
                SELECT name, value FROM rows WHERE name IN
                    (SELECT name FROM rows GROUP BY name HAVING count(DISTINCT value) > 1 LIMIT 10) ORDER BY name, value
                """
            ) { ($0.text(0) ?? "", $0.text(1) ?? "") }
        }
        var result: [(name: String, values: [String])] = []
        for (name, value) in rows {
            if result.last?.name == name { result[result.count - 1].values.append(value) } else { result.append((name, [value])) }
        }
        return result
    }

    /// The SHA-256 of the `metadata` rows as stored, in order of name and value (as bytes), each
    /// field as its SQLite type's name, a NUL, its length as 8 bytes little-endian and its bytes:
    /// with the tiles' hash, what stands for a file whose own SHA-256 is not taken (a delta's
    /// result checked by its LtHash). Every row, however long its value (``metadata()`` leaves
    /// out the longest).
    public func metadataDigest() throws -> String {
        let hasher = try SHA256Hasher()
        let rows = try database.prepare(
            "SELECT name, value, typeof(name), typeof(value) FROM metadata ORDER BY CAST(name AS BLOB), CAST(value AS BLOB)")
        while try rows.step() {
            for column in Int32(0)..<2 {
                try hasher.update(Data((rows.text(column + 2) ?? "").utf8) + [0])
                try rows.withBlob(column) { bytes in
                    try withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { try hasher.update($0) }
                    try hasher.update(bytes)
                }
            }
        }
        return try hasher.finalizeHex()
    }

    /// The `metadata` table as a dictionary, without values over ``metadataLimit(for:)``.
    public func metadata() throws -> [String: String] {
        var result: [String: String] = [:]
        let sql = "SELECT name, value FROM metadata WHERE length(CAST(value AS BLOB)) <= CASE WHEN name = 'json' THEN ? ELSE ? END LIMIT 1000"
        let arguments: [SQLiteValue] = [.integer(Int64(Self.metadataLimit(for: "json"))), .integer(Int64(Self.metadataLimit(for: "")))]
        for (name, value) in try wrap({ try database.query(sql, arguments) { ($0.text(0), $0.text(1)) } }) {
            if let name, let value { result[name] = value }
        }
        return result
    }

    /// The tile format: from `metadata.format`, else from the bytes of one tile.
    public func format() throws -> TileFormat? {
        try formatAndSource()?.format
    }

    /// The tile format and where it came from (`metadata "format"`, or the bytes of the first of
    /// the first ``formatSampleSize`` tiles with bytes whose format is known: an empty or unknown
    /// first tile hid the format, and the file was said to have none, found by an attack; the
    /// tile itself is then named by ``checkTileBytes(match:from:)``).
    func formatAndSource() throws -> (format: TileFormat, source: String)? {
        if let value = try metadata()["format"], let format = TileFormat(metadata: value) { return (format, "metadata \"format\" = \"\(value)\"") }
        let sample = try wrap {
            try database.query(
                "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles WHERE length(tile_data) > 0 LIMIT ?", [.integer(Int64(Self.formatSampleSize))]
            ) { ("\($0.text(0) ?? "?")/\($0.text(1) ?? "?")/\($0.text(2) ?? "?")", $0.blob(3)) }
        }
        for (tile, bytes) in sample {
            if let format = TileFormat(sniffing: bytes) { return (format, "the bytes of tile \(tile)") }
        }
        return nil
    }

    /// The region's zoom range by the one rule of ``MBTilesInspection/zoomRange(tiles:metadata:)``
    /// (the tiles' range widened to valid `minzoom`/`maxzoom` metadata); nil without tiles.
    public func zoomRange() throws -> ClosedRange<Int>? {
        guard let tiles = try tileZoomRange() else { return nil }
        do {
            return try MBTilesInspection.zoomRange(tiles: tiles, metadata: try metadata())
        } catch let error as MBTilesInspection.ZoomError {
            throw MBTilesError(path: path, reason: error.reason)
        }
    }

    /// How many tiles' bytes ``checkTileBytes(match:from:)`` looks at.
    public static let formatSampleSize = 16

    /// Checks the bytes of the first tiles against `format` (which came from `source`, say
    /// `metadata "format"`): a `format=jpg` file of PNG tiles would be served as image/jpeg.
    public func checkTileBytes(match format: TileFormat, from source: String) throws {
        let rows = try wrap {
            try database.query(
                "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles WHERE tile_data IS NOT NULL LIMIT ?",
                [.integer(Int64(Self.formatSampleSize))]
            ) { ("\($0.text(0) ?? "?")/\($0.text(1) ?? "?")/\($0.text(2) ?? "?")", $0.blob(3)) }
        }
        for (tile, bytes) in rows where !format.admits(bytes) {
            // The format may be right: it is the tile that has no image (the advice below would mislead).
            if bytes.isEmpty {
                throw MBTilesError(
                    path: path,
                    reason: L.localized("tile %1$s (z/x/TMS row) is empty (0 bytes), which no %2$s tile can be; remove its row or give it its image", "\(tile)", "\(format.rawValue)"))
            }
            throw MBTilesError(
                path: path,
                reason: L.localized("the tile format is %1$s (%2$s) but tile %3$s (z/x/TMS row) is %4$s; set metadata \"format\" to what the tiles are", "\(format.rawValue)", "\(source)", "\(tile)", "\(TileFormat.describe(bytes))"))
        }
    }

    /// The zoom range of the tiles themselves, whatever the metadata says; nil without tiles.
    public func tileZoomRange() throws -> ClosedRange<Int>? {
        // MIN and MAX order integers below text: a text zoom_level made the range upside down
        // (a trap). Zoom levels that are not integers make the file unusable.
        // A column or row that is not a whole number (0.5, a blob, text: found by an attack) names
        // a tile no client can ask for, and the content hash read it as another tile's.
        let rows = try wrap {
            try database.query(
                """
                SELECT MIN(zoom_level), MAX(zoom_level), COUNT(*) FILTER (WHERE typeof(zoom_level) <> 'integer'),
                       COUNT(*) FILTER (WHERE NOT (typeof(tile_column) = 'integer' OR (typeof(tile_column) = 'real' AND tile_column = CAST(tile_column AS INTEGER)))
                                           OR NOT (typeof(tile_row) = 'integer' OR (typeof(tile_row) = 'real' AND tile_row = CAST(tile_row AS INTEGER))))
                FROM tiles
                """
            ) { row in (row.isNull(0) ? nil : (row.int(0), row.int(1)), row.int(2), row.int(3)) }
        }
        guard let (bounds, notIntegers, notWhole) = rows.first else { return nil }
        guard notIntegers == 0 else { throw MBTilesError(path: path, reason: L.localized("%1$s tiles have a zoom_level that is not an integer", "\(notIntegers)")) }
        guard notWhole == 0 else {
            throw MBTilesError(path: path, reason: L.localized("%1$s tiles have a tile_column or tile_row that is not a whole number", "\(notWhole)"))
        }
        return bounds.map { $0.0...$0.1 }
    }

    public func tileCount() throws -> Int {
        try wrap { try database.query("SELECT count(*) FROM tiles") { $0.int(0) }.first ?? 0 }
    }

    /// `[west, south, east, north]` from metadata, if present and well-formed.
    public func bounds() throws -> [Double]? {
        guard let text = try metadata()["bounds"] else { return nil }
        return Self.parseBounds(text)
    }

    /// `west,south,east,north`, finite and on the globe (south ≤ north); nil otherwise. A west edge
    /// at 180° or an east edge at −180° is the antimeridian named from its other side, and is read
    /// as −180° and 180° (found by an attack: `180,-10,-180,10`, read as crossing the antimeridian,
    /// was a region no degree wide, and the viewer opened on a line).
    public static func parseBounds(_ text: String) -> [Double]? {
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingWhitespace()) }
        guard values.count == 4, var west = values[0], let south = values[1], var east = values[2], let north = values[3] else { return nil }
        guard [west, south, east, north].allSatisfy(\.isFinite), (-180...180).contains(west), (-180...180).contains(east),
            (-90...90).contains(south), (-90...90).contains(north), south <= north
        else { return nil }
        if west == 180 { west = -180 }
        if east == -180 { east = 180 }
        return [west, south, east, north]
    }

    /// `longitude,latitude,zoom`, finite and on the globe; nil otherwise.
    public static func parseCenter(_ text: String) -> [Double]? {
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingWhitespace()) }
        guard values.count == 3, let longitude = values[0], let latitude = values[1], let zoom = values[2],
            [longitude, latitude, zoom].allSatisfy(\.isFinite), (-180...180).contains(longitude), (-90...90).contains(latitude),
            (0...Double(TileCoordinate.maximumZoom)).contains(zoom)
        else { return nil }
        return [longitude, latitude, zoom]
    }

    /// The metadata's `center` as TileJSON allows it: on the globe and inside `bounds` (TileJSON
    /// 3.0.0: "Longitude and latitude MUST be within the specified bounds"), its zoom held to
    /// `zoom` when given (TileJSON's is between minzoom and maxzoom; PMTiles' is only a hint). Nil
    /// otherwise: a viewer opening there would start far from the tiles, and TileJSON treats an
    /// invalid value as absent (the caller then takes the middle of the bounds).
    public static func center(_ text: String?, within bounds: [Double], zoom: ClosedRange<Int>? = nil) -> [Double]? {
        guard let text, let center = parseCenter(text), bounds.count == 4 else { return nil }
        let (longitude, latitude) = (center[0], center[1])
        // Bounds across the antimeridian have their left edge east of their right.
        let withinLongitude =
            bounds[0] <= bounds[2] ? (bounds[0]...bounds[2]).contains(longitude) : (longitude >= bounds[0] || longitude <= bounds[2])
        guard withinLongitude, (min(bounds[1], bounds[3])...max(bounds[1], bounds[3])).contains(latitude) else { return nil }
        guard let zoom else { return center }
        // TileJSON 3.0.0: "the zoom level as an integer" (found by an attack: `4.7` was served).
        return [longitude, latitude, min(max(center[2].rounded(), Double(zoom.lowerBound)), Double(zoom.upperBound))]
    }

    /// The middle of `bounds` (west, south, east, north) as (longitude, latitude): across the
    /// antimeridian (west east of east, `170,-10,-170,10`) it is on the antimeridian's side
    /// (180), not on the other side of the world (0).
    public static func middle(of bounds: [Double]) -> (longitude: Double, latitude: Double) {
        var longitude = (bounds[0] + bounds[2]) / 2
        if bounds[0] > bounds[2] {
            longitude = (bounds[0] + bounds[2] + 360) / 2
            if longitude > 180 { longitude -= 360 }
        }
        return (longitude, (bounds[1] + bounds[3]) / 2)
    }

    /// Whether any tile has at least one byte.
    public func hasTileBytes() throws -> Bool {
        try wrap { try database.query("SELECT 1 FROM tiles WHERE length(tile_data) > 0 LIMIT 1") { $0.int(0) } }.isEmpty == false
    }

    /// Reads one tile through `tiles`: a view over a missing table fails here, not at the first
    /// request. False when there is no tile with data.
    public func canReadATile() throws -> Bool {
        try wrap { try database.query("SELECT tile_data FROM tiles WHERE tile_data IS NOT NULL LIMIT 1") { $0.blob(0) } }.isEmpty == false
    }

    /// The tile at XYZ coordinates `z/x/y` (MBTiles rows are TMS: row = 2^z − 1 − y), exactly as
    /// stored, or nil when the region has none there.
    public func tile(z: Int, x: Int, y: Int) throws -> Data? {
        switch try storedTile(z: z, x: x, y: y) {
        case .absent: nil
        case .null: Data()
        case .data(let data): data
        }
    }

    /// What the file holds at one tile's coordinates.
    public enum StoredTile: Equatable, Sendable {
        /// No row: the region has no tile there.
        case absent
        /// A row whose `tile_data` is NULL: nothing to show (not an empty image).
        case null
        /// The tile's bytes as stored (possibly none: an empty blob).
        case data(Data)
    }

    /// The tile at XYZ coordinates, telling a missing row from a NULL `tile_data`.
    public func storedTile(z: Int, x: Int, y: Int) throws -> StoredTile {
        guard let coordinate = TileCoordinate(z: z, x: x, y: y) else { return .absent }
        let row = coordinate.tmsRow
        return try wrap {
            let statement = try preparedTileStatement ?? database.prepare(
                "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?")
            preparedTileStatement = statement
            try statement.bind([.integer(Int64(z)), .integer(Int64(x)), .integer(Int64(row))])
            defer { try? statement.bind([]) }
            guard try statement.step() else { return .absent }
            return statement.isNull(0) ? .null : .data(statement.blob(0))
        }
    }

    /// Up to `limit` tile addresses as stored (zoom, column, TMS row) at the highest zoom, where
    /// tiles are smallest: what ``TileBoundsAgreement`` compares with the bounds.
    public func sampledTileAddresses(limit: Int = 512) throws -> [(z: Int, x: Int, row: Int)] {
        try wrap {
            try database.query(
                "SELECT zoom_level, tile_column, tile_row FROM tiles WHERE zoom_level = (SELECT MAX(zoom_level) FROM tiles) LIMIT ?",
                [.integer(Int64(limit))]
            ) { (z: $0.int(0), x: $0.int(1), row: $0.int(2)) }
        }.filter { (0...30).contains($0.z) && $0.x >= 0 && $0.row >= 0 && $0.x < 1 << $0.z && $0.row < 1 << $0.z }
    }

    /// Every tile as (z, x, y in XYZ, bytes), in a stable order: for verification and tests.
    public func forEachTile(_ body: (Int, Int, Int, Data) throws -> Void) throws {
        let statement = try wrap {
            try database.prepare("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY 1, 2, 3")
        }
        while try wrap({ try statement.step() }) {
            let z = statement.int(0)
            try body(z, statement.int(1), TileCoordinate.flippedRow(statement.int(2), zoom: z), statement.blob(3))
        }
    }

    /// The layer names found in up to `sampleSize` tiles (``VectorTileLayers``), first seen first;
    /// tiles that are not readable MVT are passed over.
    public func sampledVectorLayerNames(sampleSize: Int = 64) throws -> [String] {
        let tiles = try wrap {
            try database.query("SELECT tile_data FROM tiles WHERE tile_data IS NOT NULL LIMIT ?", [.integer(Int64(sampleSize))]) { $0.blob(0) }
        }
        var names: [String] = []
        for tile in tiles {
            for name in (try? VectorTileLayers.names(inTile: tile)) ?? [] where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Every query on a region's file is bounded in time (the file comes from outside).
    public static let queryTimeLimit: Double = 10

    private func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try database.withTimeLimit(Self.queryTimeLimit, body)
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: error.message)
        }
    }
}
