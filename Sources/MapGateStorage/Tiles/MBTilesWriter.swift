import FoundationEssentials
import MapGateBase

/// Writes a new MBTiles file (MBTiles 1.3: `metadata` and `tiles` tables, TMS rows, a unique
/// index) from any ``TileStore``: how a PMTiles archive becomes the MBTiles `publish` packages
/// and `sync` installs. The same store gives the same bytes every time (rows in one order, one
/// transaction, no journal), so publishing one archive twice gives one package.
public enum MBTilesWriter {
    /// Writes `store`'s tiles and `metadata` to a new file at `path` (replaced if present).
    public static func write(_ store: any TileStore, metadata: [String: String], to path: String) throws {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        do {
            let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            try database.execute("PRAGMA journal_mode = OFF")
            try database.execute("PRAGMA synchronous = OFF")
            try database.execute("PRAGMA page_size = 4096")
            try database.execute("CREATE TABLE metadata (name text, value text)")
            try database.execute("CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)")
            try database.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
            try database.execute("CREATE UNIQUE INDEX name ON metadata (name)")
            try database.transaction {
                let named = try database.prepare("INSERT INTO metadata (name, value) VALUES (?, ?)")
                for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
                    try named.bind([.text(name), .text(value)])
                    _ = try named.step()
                }
                let insert = try database.prepare("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)")
                if let archive = store as? PMTilesArchive, archive.header.tileCompression == .gzip, archive.header.tileType.isRaster {
                    // Image tiles compressed once more (the spec allows it; found by an attack: such
                    // an archive was refused as gzip tiles under a png format): unpacked, as every
                    // map client expects an image's own bytes. An image barely compresses, so one that
                    // unpacks to more than 4 times its packed size and 64 KiB is a gzip bomb (a few
                    // thousand of them at 16 MiB each would fill the disk publish converts on).
                    try archive.forEachTileBytes { z, x, y, bytes in
                        let data: Data
                        do {
                            let limit = min(TileLimits.maximumUnpackedSize, bytes.count * 4 + (64 << 10))
                            data = GzipInflater.isGzip(bytes) ? try GzipInflater.decompress(Data(bytes), maximumSize: limit) : Data(bytes)
                        } catch {
                            throw PMTilesError(
                                path: archive.path, reason: L.localized("tile %1$s/%2$s/%3$s is gzip-compressed and does not unpack: %4$s", "\(z)", "\(x)", "\(y)", errorMessage(error)))
                        }
                        try insert.bind([.integer(Int64(z)), .integer(Int64(x)), .integer(Int64(TileCoordinate.flippedRow(y, zoom: z))), .blob(data)])
                        _ = try insert.step()
                    }
                } else if let archive = store as? PMTilesArchive {
                    // Straight from the mapped archive into SQLite: no pread, Data nor array per tile.
                    try archive.forEachTileBytes { z, x, y, bytes in
                        try insert.bind(Int64(z), Int64(x), Int64(TileCoordinate.flippedRow(y, zoom: z)), blob: bytes)
                        _ = try insert.step()
                    }
                } else {
                    try store.forEachTile { z, x, y, data in
                        try insert.bind([.integer(Int64(z)), .integer(Int64(x)), .integer(Int64(TileCoordinate.flippedRow(y, zoom: z))), .blob(data)])
                        _ = try insert.step()
                    }
                }
            }
        } catch let error as SQLiteError {
            // The system's reason in the user's words first ("the disk is full"), SQLite's after.
            throw MBTilesError(path: path, reason: L.localized("cannot write it: %1$s", "\(errorMessage(error))"))
        }
    }
}
