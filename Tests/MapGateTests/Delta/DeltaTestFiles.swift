import Foundation
import MapGate
import TestSupport

/// A tile position as MBTiles stores it (TMS row).
struct TileKey: Hashable, Comparable, CustomStringConvertible {
    var zoom: Int
    var column: Int
    var row: Int

    init(_ zoom: Int, _ column: Int, _ row: Int) {
        self.zoom = zoom
        self.column = column
        self.row = row
    }

    static func < (lhs: TileKey, rhs: TileKey) -> Bool {
        (lhs.zoom, lhs.column, lhs.row) < (rhs.zoom, rhs.column, rhs.row)
    }

    var description: String { "\(zoom)/\(column)/\(row)" }
}

/// Writes and reads small MBTiles files with SQLite directly, for the delta tests.
enum DeltaTestFiles {
    enum Layout {
        /// A `tiles` table with a unique index, as tippecanoe and mb-util write it.
        case flat
        /// `map` + `images` behind a `tiles` view, lower-case hex ids, as tilelive writes it.
        case normalized
        /// martin's flat schema (primary keys), which its diff files use.
        case martinFlat
        /// martin's normalized schema: a removed tile is a `map` row with tile_id '' whose image is
        /// NULL, so that the `tiles` view (an inner join) hides it.
        case martinNormalized
        /// martin's flat-with-hash schema: `tiles_with_hash` (tiles and a hash of each) behind a view.
        case martinFlatWithHash
    }

    /// Writes a new MBTiles file. `tiles` values nil are rows with NULL `tile_data`, `metadata`
    /// values nil rows with NULL `value`.
    static func write(
        _ path: String, layout: Layout = .flat, tiles: [TileKey: Data?], metadata: [String: String?]
    ) throws {
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        try database.transaction {
            switch layout {
            case .flat, .normalized:
                try database.execute("CREATE TABLE metadata (name TEXT, value TEXT); CREATE UNIQUE INDEX name ON metadata (name)")
            case .martinFlat, .martinNormalized, .martinFlatWithHash:
                try database.execute("CREATE TABLE metadata (name TEXT NOT NULL PRIMARY KEY, value TEXT)")
            }
            for (name, value) in metadata {
                try database.execute("INSERT INTO metadata VALUES (?, ?)", [.text(name), value.map { .text($0) } ?? .null])
            }
            switch layout {
            case .flat, .martinFlat:
                try database.execute(
                    layout == .flat
                        ? """
                        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
                        CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
                        """
                        : """
                        CREATE TABLE tiles (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL,
                            tile_row INTEGER NOT NULL, tile_data BLOB, PRIMARY KEY (zoom_level, tile_column, tile_row));
                        """)
                let insert = try database.prepare("INSERT INTO tiles VALUES (?, ?, ?, ?)")
                for (key, data) in tiles {
                    try insert.bind(coordinates(key) + [data.map { .blob($0) } ?? .null])
                    while try insert.step() {}
                }
            case .martinFlatWithHash:
                try database.execute(
                    """
                    CREATE TABLE tiles_with_hash (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL,
                        tile_row INTEGER NOT NULL, tile_data BLOB, tile_hash TEXT,
                        PRIMARY KEY (zoom_level, tile_column, tile_row));
                    CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles_with_hash;
                    """)
                let insert = try database.prepare("INSERT INTO tiles_with_hash VALUES (?, ?, ?, ?, ?)")
                for (key, data) in tiles {
                    try insert.bind(coordinates(key) + [data.map { .blob($0) } ?? .null, .text(data.map(tileID) ?? "")])
                    while try insert.step() {}
                }
            case .normalized, .martinNormalized:
                try database.execute(
                    layout == .normalized
                        ? """
                        CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT, grid_id TEXT);
                        CREATE TABLE images (tile_data BLOB, tile_id TEXT);
                        CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row);
                        CREATE UNIQUE INDEX images_id ON images (tile_id);
                        """
                        : """
                        CREATE TABLE map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                            tile_id TEXT, PRIMARY KEY (zoom_level, tile_column, tile_row));
                        CREATE TABLE images (tile_id TEXT NOT NULL PRIMARY KEY, tile_data BLOB);
                        """)
                try database.execute(
                    """
                    CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
                        map.tile_row AS tile_row, images.tile_data AS tile_data
                        FROM map JOIN images ON images.tile_id = map.tile_id;
                    """)
                let map = try database.prepare("INSERT INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?, ?, ?, ?)")
                let image = try database.prepare("INSERT OR IGNORE INTO images (tile_id, tile_data) VALUES (?, ?)")
                for (key, data) in tiles {
                    let id = try data.map(tileID) ?? ""
                    if data == nil && layout == .normalized { continue }
                    try map.bind(coordinates(key) + [.text(id)])
                    while try map.step() {}
                    try image.bind([.text(id), data.map { .blob($0) } ?? .null])
                    while try image.step() {}
                }
            }
        }
    }

    private static func coordinates(_ key: TileKey) -> [SQLiteValue] {
        [.integer(Int64(key.zoom)), .integer(Int64(key.column)), .integer(Int64(key.row))]
    }

    /// Every row of `tiles` (table or view), nil for NULL `tile_data`.
    static func tiles(of path: String) throws -> [TileKey: Data?] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        var result: [TileKey: Data?] = [:]
        for (key, data) in try database.query("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles", read: {
            (TileKey($0.int(0), $0.int(1), $0.int(2)), $0.isNull(3) ? nil : $0.blob(3))
        }) {
            result[key] = .some(data)
        }
        return result
    }

    /// Every row of `metadata`, nil for a NULL value.
    static func metadata(of path: String) throws -> [String: String?] {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        var result: [String: String?] = [:]
        for (name, value) in try database.query("SELECT name, value FROM metadata", read: { ($0.text(0) ?? "", $0.text(1)) }) {
            result[name] = .some(value)
        }
        return result
    }

    /// `metadata` without the three hash keys, which apply sets and make compares separately.
    static func metadataWithoutHashes(of path: String) throws -> [String: String?] {
        try metadata(of: path).filter { !$0.key.hasPrefix("agg_tiles_hash") }
    }

    /// Copies a file into `directory`, writable, so that a test can change it.
    static func copy(_ path: String, to directory: TemporaryDirectory, as name: String) throws -> String {
        let destination = directory.file(name)
        try FileManager.default.copyItem(atPath: path, toPath: destination)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: destination)
        return destination
    }

    /// The SHA-256 of a file's bytes: "nothing changed" means this stayed the same.
    static func fingerprint(_ path: String) throws -> String {
        try SHA256Hasher.hex(ofFileAt: path)
    }

    /// A tile id for the de-duplicated layout. tilelive uses the MD5 of the bytes; any unique text
    /// works for the view, and ids by another scheme check that apply does not assume MD5 ids.
    static func tileID(_ data: Data) throws -> String {
        String(try SHA256Hasher.hex(of: data).prefix(32))
    }
}

/// A deterministic generator (SplitMix64), so that generated tiles are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension DeltaTestFiles {
    /// A tile that looks like a PNG (or a gzip-compressed vector tile): the magic bytes, then noise.
    static func tileBytes(png: Bool, size: Int, using generator: inout SeededGenerator) -> Data {
        var bytes: [UInt8] = png ? [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] : [0x1F, 0x8B, 0x08, 0x00]
        for _ in 0..<size { bytes.append(UInt8.random(in: 0...255, using: &generator)) }
        return Data(bytes)
    }

    /// Every tile of zooms 0…`maxZoom` with generated bytes.
    static func pyramid(maxZoom: Int, png: Bool, seed: UInt64) -> [TileKey: Data?] {
        var generator = SeededGenerator(seed: seed)
        var tiles: [TileKey: Data?] = [:]
        for zoom in 0...maxZoom {
            for column in 0..<(1 << zoom) {
                for row in 0..<(1 << zoom) {
                    tiles[TileKey(zoom, column, row)] = .some(
                        tileBytes(png: png, size: Int.random(in: 20...300, using: &generator), using: &generator))
                }
            }
        }
        return tiles
    }
}
