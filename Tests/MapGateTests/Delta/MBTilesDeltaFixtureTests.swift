import Foundation
import MapGate
import TestSupport
import Testing

extension DeltaTests {
    /// Deltas between real files made by other projects and edited copies of them.
    @Suite struct MBTilesDeltaFixtureTests {
        typealias Files = DeltaTestFiles

        /// node-mbtiles' de-duplicated file as the base: the delta is read through its view, and
        /// applying it writes `map` + `images`. New images get the lower-case MD5 of their bytes as
        /// id, like the file's own style, and tiles with the same new bytes share one image.
        @Test func deduplicatedFixtureAsBase() throws {
            let fixture = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
            let directory = try TemporaryDirectory()
            let target = try Self.editedFlatCopy(
                of: fixture, in: directory,
                edits: """
                    DELETE FROM tiles WHERE zoom_level = 4 AND tile_column < 4;
                    UPDATE tiles SET tile_data = CAST(tile_data || X'00' AS BLOB) WHERE zoom_level = 3 AND tile_row < 4;
                    UPDATE tiles SET tile_data = X'89504E470D0A1A0A2020' WHERE zoom_level = 2 AND tile_column = 0;
                    INSERT INTO tiles VALUES (5, 0, 0, X'89504E470D0A1A0A0102030405');
                    UPDATE metadata SET value = 'changed description' WHERE name = 'description';
                    DELETE FROM metadata WHERE name = 'formatter';
                    INSERT INTO metadata VALUES ('attribution', 'edited copy');
                    """)
            let fixtureBefore = try Files.fingerprint(fixture)
            let delta = directory.file("delta.mbtiles")

            let summary = try MBTilesDelta.make(from: fixture, to: target, output: delta)
            let copy = try Files.copy(fixture, to: directory, as: "copy.mbtiles")
            try MBTilesDelta.apply(delta: delta, to: copy)

            #expect(try Files.fingerprint(fixture) == fixtureBefore, "make changed its input")
            let baseTiles = try Files.tiles(of: fixture)
            let targetTiles = try Files.tiles(of: target)
            #expect(summary.tilesRemoved == baseTiles.keys.filter { targetTiles[$0] == nil }.count)
            #expect(summary.tilesWritten == targetTiles.filter { baseTiles[$0.key] != $0.value }.count)
            #expect(summary.tilesRemoved > 0 && summary.tilesWritten > 5)
            #expect(summary.metadataWritten == 2 && summary.metadataRemoved == 1)
            #expect(try Files.tiles(of: copy) == targetTiles)
            #expect(try Files.metadataWithoutHashes(of: copy) == Files.metadataWithoutHashes(of: target))
            #expect(try TilesetHash.compute(ofFileAt: copy) == TilesetHash.compute(ofFileAt: target))

            let database = try SQLiteDatabase(path: copy, mode: .readOnly)
            #expect(try database.query("SELECT type FROM sqlite_master WHERE name = 'tiles'") { $0.text(0) ?? "" } == ["view"])
            let sharedIDs = try database.query("SELECT DISTINCT tile_id FROM map WHERE zoom_level = 2 AND tile_column = 0") {
                $0.text(0) ?? ""
            }
            #expect(sharedIDs.count == 1, "four tiles with the same bytes: \(sharedIDs)")
            let newTile = try database.query("SELECT tile_id FROM map WHERE zoom_level = 5") { $0.text(0) ?? "" }
            let bytes = directory.file("new-tile.png")
            try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4, 5]).write(to: URL(fileURLWithPath: bytes))
            let md5sum = try runProcess("/usr/bin/md5sum", [bytes])
            #expect(newTile == [String(md5sum.stdout.prefix(32))], "the id is not the lower-case MD5 of the bytes")
            MBTilesDeltaTests.expectNoOrphanImagesIn(database)
        }

        /// mbtileserver's geography-class file keeps its UTFGrid tables and views working: the
        /// unchanged tiles keep their grids, the changed one loses its link.
        @Test func deduplicatedFixtureKeepsItsGrids() throws {
            let fixture = try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles")
            let directory = try TemporaryDirectory()
            let target = try Self.editedFlatCopy(
                of: fixture, in: directory,
                edits: "UPDATE tiles SET tile_data = tile_data || X'00' WHERE zoom_level = 1 AND tile_column = 1 AND tile_row = 1")
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: fixture, to: target, output: delta)
            let copy = try Files.copy(fixture, to: directory, as: "copy.mbtiles")

            let summary = try MBTilesDelta.apply(delta: delta, to: copy)

            #expect(summary.tilesWritten == 1 && summary.tilesRemoved == 0)
            #expect(try Files.tiles(of: copy) == Files.tiles(of: target))
            let database = try SQLiteDatabase(path: copy, mode: .readOnly)
            let grids = try database.query("SELECT zoom_level, tile_column, tile_row FROM grids ORDER BY 1, 2, 3") {
                TileKey($0.int(0), $0.int(1), $0.int(2))
            }
            #expect(grids == [TileKey(0, 0, 0), TileKey(1, 0, 0), TileKey(1, 0, 1), TileKey(1, 1, 0)])
            #expect(try database.query("SELECT count(*) FROM grid_data") { $0.int(0) }.first ?? 0 > 0)
            #expect(try database.query("SELECT count(*) FROM images") { $0.int(0) } == [5])
            #expect(try database.query("PRAGMA quick_check") { $0.text(0) } == ["ok"])
        }

        /// tippecanoe's vector tiles (gzip-compressed pbf, a plain `tiles` table) both ways.
        @Test func flatVectorFixtureBothWays() throws {
            let fixture = try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles")
            let directory = try TemporaryDirectory()
            let target = try Self.editedFlatCopy(
                of: fixture, in: directory,
                edits: """
                    DELETE FROM tiles WHERE zoom_level = 6 AND tile_row % 2 = 0;
                    UPDATE tiles SET tile_data = (SELECT tile_data FROM tiles WHERE zoom_level = 0) WHERE zoom_level = 5;
                    INSERT INTO tiles VALUES (7, 0, 0, X'1F8B0800000000000003030000000000000000');
                    UPDATE metadata SET value = 'world cities, edited' WHERE name = 'name';
                    """)
            let forward = directory.file("forward.mbtiles")
            let backward = directory.file("backward.mbtiles")
            try MBTilesDelta.make(from: fixture, to: target, output: forward)
            try MBTilesDelta.make(from: target, to: fixture, output: backward)

            let copy = try Files.copy(fixture, to: directory, as: "copy.mbtiles")
            try MBTilesDelta.apply(delta: forward, to: copy)
            #expect(try Files.tiles(of: copy) == Files.tiles(of: target))
            #expect(try Files.metadataWithoutHashes(of: copy) == Files.metadataWithoutHashes(of: target))

            try MBTilesDelta.apply(delta: backward, to: copy)
            #expect(try Files.tiles(of: copy) == Files.tiles(of: fixture))
            #expect(try Files.metadataWithoutHashes(of: copy) == Files.metadataWithoutHashes(of: fixture))
            // The forward delta does not fit the target: its base is the fixture.
            let twice = try Files.copy(target, to: directory, as: "twice.mbtiles")
            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: forward, to: twice) }
            guard case .baseMismatch? = error?.reason else {
                Issue.record("expected baseMismatch, got \(String(describing: error))")
                return
            }
        }

        /// A flat copy of `fixture` (read through its `tiles` view or table) with `edits` run on it.
        static func editedFlatCopy(of fixture: String, in directory: TemporaryDirectory, edits: String) throws -> String {
            let path = directory.file("target.mbtiles")
            let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            try database.execute("ATTACH DATABASE ? AS source", [.text(fixture)])
            try database.execute(
                """
                CREATE TABLE metadata (name TEXT, value TEXT);
                CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
                CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
                INSERT INTO metadata SELECT name, value FROM source.metadata;
                INSERT INTO tiles SELECT zoom_level, tile_column, tile_row, tile_data FROM source.tiles;
                DETACH DATABASE source;
                """)
            try database.execute(edits)
            return path
        }
    }
}
