import Foundation
import MapGate
import TestSupport
import Testing

extension DeltaTests {
    @Suite struct TilesetHashTests {
        /// Two rows for one tile say where the missing unique index belongs: on `tiles`, or on
        /// `map` when `tiles` is a view over `map` and `images` (it said "the tiles table" for both).
        @Test func aTileStoredTwiceNamesTheTableThatNeedsTheIndex() throws {
            let work = try TemporaryDirectory()
            let path = work.file("views.mbtiles")
            try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: path)
            try SQLiteDatabase(path: path, mode: .readWriteCreate).execute(
                "DROP INDEX map_index; INSERT INTO map SELECT * FROM map WHERE zoom_level = 1 LIMIT 1")
            let error = #expect(throws: DeltaError.self) { try TilesetHash.compute(ofFileAt: path) }
            #expect(error?.errorDescription?.contains("is stored twice: the map table (which the tiles view reads) needs a unique index") == true, "\(String(describing: error))")
            // A tile_id in two rows of `images`, the map table's index in place (found by an
            // attack: the advice named only the map table): the images table is named too.
            let images = work.file("images.mbtiles")
            try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: images)
            try SQLiteDatabase(path: images, mode: .readWriteCreate).execute(
                "DROP INDEX IF EXISTS images_id; INSERT INTO images SELECT * FROM images WHERE tile_id = (SELECT tile_id FROM map WHERE zoom_level = 1 LIMIT 1)")
            let twice = #expect(throws: DeltaError.self) { try TilesetHash.compute(ofFileAt: images) }
            #expect(twice?.errorDescription?.contains("and the images table one on tile_id") == true, "\(String(describing: twice))")
        }

        /// martin's own published values for its test databases (see ``MartinSnapshots``).
        @Test(arguments: [
            ("v1", MartinSnapshots.v1Tiles, MartinSnapshots.v1Hash),
            ("v2", MartinSnapshots.v2Tiles, MartinSnapshots.v2Hash),
            ("dif", MartinSnapshots.difTiles, MartinSnapshots.difHash),
            ("empty", [:], TilesetHash.emptyHex),
        ])
        func matchesMartinsPublishedHashes(name: String, tiles: [TileKey: Data?], expected: String) throws {
            let directory = try TemporaryDirectory()
            for layout in [DeltaTestFiles.Layout.martinFlat, .flat] {
                let path = directory.file("\(name)-\(layout).mbtiles")
                try DeltaTestFiles.write(path, layout: layout, tiles: tiles, metadata: [:])
                let hash = try TilesetHash.compute(ofFileAt: path)
                #expect(hash.hex == expected, "\(name) as \(layout)")
                #expect(hash.tileCount == tiles.count)
                #expect(hash.nullTileCount == tiles.values.filter { $0 == nil }.count)
            }
        }

        /// Real files, including two de-duplicated ones read through their view. Expected values by two
        /// other implementations: utiles 0.9.0's `agg-hash` (PyPI, Rust) when these notes were written,
        /// and the sqlite3 program + md5sum, run here.
        @Test(arguments: [
            ("mbtileserver-world_cities.mbtiles", "84792BF4EE9AEDDC5B1A60E707011FEE", 196),
            ("node-mbtiles-plain_1.mbtiles", "B022AC7C8C41FEF958506C19E856038E", 285),
            ("mbtileserver-geography-class-png.mbtiles", "A85C80BA1CE047E2D93DAC25C5179775", 5),
        ])
        func matchesOtherImplementationsOnRealFiles(name: String, utilesHash: String, count: Int) throws {
            // A private copy: other tests read the shared fixtures at the same time.
            let directory = try TemporaryDirectory()
            let path = directory.file(name)
            try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + name), toPath: path)
            let hash = try TilesetHash.compute(ofFileAt: path)
            #expect(hash.hex == utilesHash, "\(name)")
            #expect(hash.tileCount == count, "\(name)")
            #expect(hash.hex == (try Self.sqliteAndMD5sum(path)), "\(name)")
        }

        @Test func generatedFilesMatchSQLiteAndMD5sum() throws {
            let directory = try TemporaryDirectory()
            for layout in [DeltaTestFiles.Layout.flat, .normalized] {
                let path = directory.file("pyramid-\(layout).mbtiles")
                try DeltaTestFiles.write(
                    path, layout: layout, tiles: DeltaTestFiles.pyramid(maxZoom: 4, png: layout == .flat, seed: 11),
                    metadata: ["name": "pyramid"])
                let hash = try TilesetHash.compute(ofFileAt: path)
                #expect(hash.tileCount == 341)
                #expect(hash.hex == (try Self.sqliteAndMD5sum(path)), "\(layout)")
            }
        }

        @Test func incrementalHasherGivesTheSameHash() throws {
            let hasher = try TilesetHasher()
            for key in MartinSnapshots.difTiles.keys.sorted() {
                try hasher.add(zoom: key.zoom, column: key.column, row: key.row, data: MartinSnapshots.difTiles[key] ?? nil)
            }
            let hash = try hasher.finalize()
            #expect(hash.hex == MartinSnapshots.difHash)
            #expect(hash.tileCount == 9)
            #expect(hash.nullTileCount == 3)
            // It starts afresh after finalize.
            #expect(try hasher.finalize().hex == TilesetHash.emptyHex)
        }

        @Test func incrementalHasherRefusesTilesOutOfOrder() throws {
            let hasher = try TilesetHasher()
            try hasher.add(zoom: 5, column: 1, row: 1, data: Data("a".utf8))
            let backwards = #expect(throws: DeltaError.self) {
                try hasher.add(zoom: 5, column: 0, row: 9, data: Data("b".utf8))
            }
            guard case .outOfOrder(let detail)? = backwards?.reason else {
                Issue.record("expected outOfOrder, got \(String(describing: backwards))")
                return
            }
            #expect(detail.contains("5/0/9 after 5/1/1"))
            #expect(throws: DeltaError.self) { try hasher.add(zoom: 5, column: 1, row: 1, data: nil) }
        }

        @Test func numericTileDataIsRefused() throws {
            let directory = try TemporaryDirectory()
            let path = directory.file("numbers.mbtiles")
            try DeltaTestFiles.write(path, tiles: [TileKey(0, 0, 0): Data("x".utf8)], metadata: [:])
            let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            try database.execute("INSERT INTO tiles VALUES (1, 0, 0, 42)")
            let error = #expect(throws: DeltaError.self) { try TilesetHash.compute(ofFileAt: path) }
            #expect(error?.localizedDescription.contains("tile 1/0/0 has a number as tile_data") == true)
        }

        /// A small file cannot hold the hashing pass for long behind a slow view: the pass gets
        /// 30 s plus 1 s per 10 MB of the file (here a limit of 1 s stands in for it).
        @Test func aSlowViewIsStoppedByTheTimeLimit() throws {
            #expect(SQLiteDatabase.timeLimit(forPassOver: 14_000) < 31)
            #expect(SQLiteDatabase.timeLimit(forPassOver: 360_000_000) == 66)
            let directory = try TemporaryDirectory()
            let path = directory.file("slow.mbtiles")
            try DeltaTestFiles.write(path, tiles: [TileKey(0, 0, 0): Data("x".utf8), TileKey(1, 0, 0): Data("y".utf8)], metadata: [:])
            // Every row of `tiles` costs a count to ten billion.
            try SQLiteDatabase(path: path, mode: .readWriteCreate).execute(
                """
                ALTER TABLE tiles RENAME TO stored;
                CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row,
                    (WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000 + stored.tile_row * 0)
                     SELECT zeroblob(max(x) % 10) FROM c) AS tile_data
                FROM stored;
                """)
            let started = Date()
            let error = #expect(throws: DeltaError.self) { try TilesetHash.compute(ofFileAt: path, timeLimit: 1) }
            #expect(error?.localizedDescription.contains("a query took longer than 1 s and was stopped") == true, "\(String(describing: error))")
            #expect(Date().timeIntervalSince(started) < 10)
        }

        @Test func missingAndNonMBTilesFilesAreNamed() throws {
            let directory = try TemporaryDirectory()
            let missing = #expect(throws: DeltaError.self) { try TilesetHash.compute(ofFileAt: directory.file("none.mbtiles")) }
            #expect(missing?.reason == .missingFile)
            let invalid = #expect(throws: DeltaError.self) {
                try TilesetHash.compute(ofFileAt: try TestPaths.shared("mbtiles/mbtileserver-invalid.mbtiles"))
            }
            #expect(invalid?.reason == .notMBTiles("no tiles table or view"))
            let corrupt = #expect(throws: DeltaError.self) {
                try TilesetHash.compute(ofFileAt: try TestPaths.shared("mbtiles/node-mbtiles-corrupt.mbtiles"))
            }
            #expect(corrupt?.localizedDescription.contains("malformed") == true, "\(String(describing: corrupt))")
        }

        /// The hash by other programs: sqlite3 writes each row as hex (z, x, y as text, then the
        /// bytes), basenc turns the hex back into bytes and md5sum hashes them.
        static func sqliteAndMD5sum(_ path: String) throws -> String {
            let sql = """
                SELECT hex(CAST(zoom_level AS TEXT)) || hex(CAST(tile_column AS TEXT)) || hex(CAST(tile_row AS TEXT))
                       || hex(tile_data)
                FROM tiles ORDER BY zoom_level, tile_column, tile_row
                """
            let quoted = "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
            let result = try runProcess(
                "/bin/bash",
                ["-o", "pipefail", "-c", "sqlite3 -readonly -cmd '.timeout 10000' \(quoted) \"\(sql)\" | tr -d '\\n' | basenc --base16 -d | md5sum"],
                timeout: 120)
            guard result.status == 0, let digest = result.stdout.split(separator: " ").first, digest.count == 32 else {
                throw MissingFixture(
                    path: "sqlite3, basenc and md5sum (from scripts/install-deps) on \(path): exit \(result.status), \(result.stderr)")
            }
            return digest.uppercased()
        }
    }
}
