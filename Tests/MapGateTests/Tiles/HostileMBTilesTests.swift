import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Regions that "installed fine" in 1.4.0 and then failed at every request, or hung `list`:
/// each is refused at install now, with the reason, and the installed version stays.
@Suite struct HostileMBTilesTests {
    let harness: SyncHarness

    init() throws {
        harness = try SyncHarness()
    }

    /// Writes an MBTiles file with `sql` after a plain metadata table holding `format` png.
    func make(_ name: String, _ sql: String) throws -> String {
        let path = harness.work.file(name)
        let tile = "X'89504E470D0A1A0A0000'"
        let setup = """
            CREATE TABLE metadata (name TEXT, value TEXT);
            INSERT INTO metadata VALUES ('format', 'png'), ('name', 'hostile');
            """
        let result = try runProcess("/usr/bin/sqlite3", [path, setup + sql.replacingOccurrences(of: "TILE", with: tile)])
        #expect(result.status == 0, "\(result.stderr)")
        return path
    }

    func refused(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try harness.builder.add(id: "r", source: path, format: "png", maxzoom: 30)
        let error = #expect(throws: RegionError.self, sourceLocation: sourceLocation) { try harness.sync("r") }
        #expect(error?.kind == .badData, sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.regionPath("r")), sourceLocation: sourceLocation)
        return error?.reason ?? ""
    }

    @Test func aTilesViewOverAMissingTableIsRefused() throws {
        let path = try make("view.mbtiles", """
            CREATE TABLE images (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO images VALUES (0, 0, 0, TILE);
            CREATE VIEW tiles AS SELECT * FROM images;
            DROP TABLE images;
            """)
        #expect(try refused(path).contains("invalid package"))
    }

    @Test func aFileWithoutTilesIsRefused() throws {
        let path = try make("empty.mbtiles", "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
        #expect(try refused(path).contains("holds no tiles"))
    }

    /// 1.4.0 installed this at once; then `list` took 35 s. Every query is bounded in time now.
    @Test func aViewThatMakesUpEndlessRowsIsRefusedInBoundedTime() throws {
        let path = try make("endless.mbtiles", """
            CREATE VIEW tiles AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n LIMIT 200000000)
                SELECT 5 AS zoom_level, i % 32 AS tile_column, i / 32 % 32 AS tile_row, TILE AS tile_data FROM n;
            """)
        let started = Date()
        let reason = try refused(path)
        #expect(Date().timeIntervalSince(started) < 30, "\(reason)")
        #expect(reason.contains("took longer than") || reason.contains("more rows than the file can hold"), "\(reason)")
    }

    @Test(arguments: ["nan,nan,nan,nan", "-200,0,10,10", "0,50,10,10", "1,2,3", "inf,0,1,1"])
    func boundsThatAreNotOnTheGlobeAreRefused(bounds: String) throws {
        let path = try make("bounds.mbtiles", """
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles VALUES (0, 0, 0, TILE);
            INSERT INTO metadata VALUES ('bounds', '\(bounds)');
            """)
        #expect(try refused(path).contains("bounds"), "\(bounds)")
    }

    @Test func aCenterThatIsNotANumberIsRefused() throws {
        let path = try make("center.mbtiles", """
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles VALUES (0, 0, 0, TILE);
            INSERT INTO metadata VALUES ('center', 'nan,0,2');
            """)
        #expect(try refused(path).contains("center"))
    }

    /// A center whose zoom is out of range is said as such, not as "not finite" (found by an attack).
    @Test(arguments: ["0,0,99", "0,95,2", "200,0,2", "0,0"])
    func aCenterOffTheGlobeSaysWhatItMustBe(center: String) throws {
        let path = try make("center.mbtiles", """
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles VALUES (0, 0, 0, TILE);
            INSERT INTO metadata VALUES ('center', '\(center)');
            """)
        let message = try refused(path)
        #expect(message.contains("center \"\(center)\" must be longitude,latitude,zoom with longitude -180…180, latitude -90…90 and zoom 0…30"), "\(message)")
        #expect(!message.contains("finite"), "\(message)")
    }

    /// 1.4.0 copied a 50 MB description into every TileJSON answer.
    @Test func metadataValuesOverTheCapAreLeftOut() throws {
        let path = try make("big.mbtiles", """
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles VALUES (0, 0, 0, TILE);
            INSERT INTO metadata VALUES ('description', printf('%.*c', 5000000, 'x')), ('attribution', 'kept');
            """)
        let metadata = try MBTilesFile(path: path).metadata()
        #expect(metadata["description"] == nil)
        #expect(metadata["attribution"] == "kept")
    }
}
