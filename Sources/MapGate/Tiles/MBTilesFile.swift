import Foundation

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
    private lazy var tileStatement: SQLiteStatement? = try? database.prepare(
        "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?")

    /// Opens `path` read-only and checks that it is an MBTiles file at all.
    ///
    /// - Parameter immutable: the file will not change while open (see ``SQLiteDatabase/Mode/immutable``).
    public init(path: String, immutable: Bool = false) throws {
        self.path = path
        do {
            database = try SQLiteDatabase(path: path, mode: immutable ? .immutable : .readOnly)
            // A server keeps one connection per worker and region: each keeps a small private
            // page cache, and the OS page cache holds the file once for all of them.
            try database.execute("PRAGMA cache_size = -256")
            let objects = try database.query(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name IN ('tiles', 'metadata')"
            ) { $0.text(0) ?? "" }
            for required in ["tiles", "metadata"] where !objects.contains(required) {
                throw MBTilesError(path: path, reason: "not an MBTiles file: no \(required) table or view")
            }
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: "not a readable SQLite file: \(error.message)")
        }
    }

    /// `PRAGMA quick_check`; throws with SQLite's first complaint.
    public func checkIntegrity() throws {
        do {
            let result = try database.query("PRAGMA quick_check") { $0.text(0) ?? "" }
            guard result == ["ok"] else {
                throw MBTilesError(path: path, reason: "integrity check failed: \(result.prefix(3).joined(separator: "; "))")
            }
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: "integrity check failed: \(error.message)")
        }
    }

    /// The `metadata` table as a dictionary.
    public func metadata() throws -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in try wrap({ try database.query("SELECT name, value FROM metadata") { ($0.text(0), $0.text(1)) } }) {
            if let name, let value { result[name] = value }
        }
        return result
    }

    /// The tile format: from `metadata.format`, else from the bytes of one tile.
    public func format() throws -> TileFormat? {
        if let value = try metadata()["format"], let format = TileFormat(metadata: value) { return format }
        let sample = try wrap { try database.query("SELECT tile_data FROM tiles LIMIT 1") { $0.blob(0) } }
        return sample.first.flatMap { TileFormat(sniffing: $0) }
    }

    /// The zoom range: from `minzoom`/`maxzoom` metadata, else from the tiles themselves.
    public func zoomRange() throws -> ClosedRange<Int>? {
        let metadata = try metadata()
        if let low = metadata["minzoom"].flatMap({ Int($0) }), let high = metadata["maxzoom"].flatMap({ Int($0) }), low <= high {
            return low...high
        }
        // MIN and MAX order integers below text: a text zoom_level made the range upside down
        // (a trap). Zoom levels that are not integers make the file unusable.
        let rows = try wrap {
            try database.query(
                "SELECT MIN(zoom_level), MAX(zoom_level), COUNT(*) FILTER (WHERE typeof(zoom_level) <> 'integer') FROM tiles"
            ) { row in (row.isNull(0) ? nil : (row.int(0), row.int(1)), row.int(2)) }
        }
        guard let (bounds, notIntegers) = rows.first else { return nil }
        guard notIntegers == 0 else { throw MBTilesError(path: path, reason: "\(notIntegers) tiles have a zoom_level that is not an integer") }
        return bounds.map { $0.0...$0.1 }
    }

    public func tileCount() throws -> Int {
        try wrap { try database.query("SELECT count(*) FROM tiles") { $0.int(0) }.first ?? 0 }
    }

    /// `[west, south, east, north]` from metadata, if present and well-formed.
    public func bounds() throws -> [Double]? {
        guard let text = try metadata()["bounds"] else { return nil }
        let values = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return values.count == 4 ? values : nil
    }

    /// The tile at XYZ coordinates `z/x/y` (MBTiles rows are TMS: row = 2^z − 1 − y), exactly as
    /// stored, or nil when the region has none there.
    public func tile(z: Int, x: Int, y: Int) throws -> Data? {
        guard (0...30).contains(z), x >= 0, y >= 0, x < 1 << z, y < 1 << z else { return nil }
        let row = (1 << z) - 1 - y
        guard let statement = tileStatement else {
            throw MBTilesError(path: path, reason: "cannot read tiles")
        }
        return try wrap {
            try statement.bind([.integer(Int64(z)), .integer(Int64(x)), .integer(Int64(row))])
            defer { try? statement.bind([]) }
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// Every tile as (z, x, y in XYZ, bytes), in a stable order: for verification and tests.
    public func forEachTile(_ body: (Int, Int, Int, Data) throws -> Void) throws {
        let statement = try wrap {
            try database.prepare("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY 1, 2, 3")
        }
        while try wrap({ try statement.step() }) {
            let z = statement.int(0)
            try body(z, statement.int(1), (1 << z) - 1 - statement.int(2), statement.blob(3))
        }
    }

    private func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw MBTilesError(path: path, reason: error.message)
        }
    }
}
