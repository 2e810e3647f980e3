import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 38 item 2: a file's `scheme`, rows and `bounds` read together. Advice that would break
/// a correct file (flipping TMS rows because `scheme` says xyz) is never given; a region none of
/// whose tiles lies inside its bounds is refused. Files made with the real `sqlite3` tool: one
/// PNG tile of a real file at zoom 4, column 8, and XYZ row 5 (north of the equator: 0° to 41°N),
/// with the bounds of that tile.
@Suite struct TileBoundsAgreementTests {
    let work: TemporaryDirectory

    init() throws {
        work = try TemporaryDirectory()
    }

    /// A file with its one tile stored at `row`, `scheme` if given, and the bounds of XYZ 4/8/5.
    func file(row: Int, scheme: String?) throws -> String {
        let path = work.file("t-\(row)-\(scheme ?? "none").mbtiles")
        let png = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        let bounds = TileBoundsAgreement.extent(z: 4, x: 8, y: 5).map { String($0) }.joined(separator: ",")
        var sql = """
            ATTACH '\(png)' AS source;
            CREATE TABLE metadata (name TEXT, value TEXT);
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO metadata VALUES ('name', 'one'), ('format', 'png'), ('bounds', '\(bounds)'), ('minzoom', '4'), ('maxzoom', '4');
            INSERT INTO tiles SELECT 4, 8, \(row), tile_data FROM source.tiles WHERE zoom_level = 4 LIMIT 1;
            """
        if let scheme { sql += "INSERT INTO metadata VALUES ('scheme', '\(scheme)');" }
        let made = try runProcess("/usr/bin/sqlite3", [path, sql])
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    func refusal(_ path: String) -> String? {
        do {
            _ = try MBTilesInspection.inspect(path)
            return nil
        } catch {
            return errorMessage(error)
        }
    }

    @Test func tmsRowsUnderAWrongSchemeRowAreToldToDeleteTheRowOnly() throws {
        let reason = try #require(refusal(try file(row: 10, scheme: "xyz")))
        #expect(reason.contains("the rows are TMS and agree with the bounds"), "\(reason)")
        #expect(reason.contains("DELETE FROM metadata WHERE name = 'scheme'") && !reason.contains("UPDATE tiles"), "\(reason)")
    }

    @Test func xyzRowsAreToldToFlip() throws {
        let reason = try #require(refusal(try file(row: 5, scheme: "xyz")))
        #expect(reason.contains("the rows are XYZ") && reason.contains("UPDATE tiles SET tile_row"), "\(reason)")
    }

    @Test func tilesOutsideTheirBoundsAreRefused() throws {
        let reason = try #require(refusal(try file(row: 5, scheme: nil)))
        #expect(reason.contains("none of its tiles lies inside its bounds") && reason.contains("flip them"), "\(reason)")
    }

    /// Bounds across the antimeridian are two spans of longitude, each judged (found by an
    /// attack: they were not judged, and a Korean raster with Fiji's bounds was published). XYZ
    /// 4/15/9 and 4/0/9 (41°S to 22°S, on either side of 180°) lie in `170,-45,-170,-30`; 4/8/9
    /// (0° to 22.5°E) and 4/13/6 (Korea's) do not.
    @Test func boundsAcrossTheAntimeridianAreJudged() {
        let bounds: [Double] = [170, -45, -170, -30]
        func tms(_ z: Int, _ x: Int, _ y: Int) -> (z: Int, x: Int, row: Int) { (z, x, (1 << z) - 1 - y) }
        #expect(TileBoundsAgreement(addresses: [tms(4, 15, 9), tms(4, 0, 9)], bounds: bounds).tmsAgrees)
        #expect(!TileBoundsAgreement(addresses: [tms(4, 15, 9), tms(4, 8, 9)], bounds: bounds).tmsAgrees)
        let korea = TileBoundsAgreement(addresses: [tms(4, 13, 6)], bounds: [177, -20, -178, -15])
        #expect(!korea.anyTMSInside && !korea.tmsAgrees)
        // A region that is the whole band round the world, written across: every column is in it.
        #expect(TileBoundsAgreement(addresses: (0..<16).map { tms(4, $0, 9) }, bounds: [0.0001, -45, 0, -30]).tmsAgrees)
    }

    @Test func aCorrectFileIsTakenAsItIs() throws {
        #expect(refusal(try file(row: 10, scheme: nil)) == nil)
        #expect(refusal(try file(row: 10, scheme: "tms")) == nil)
    }

    /// Following the advice gives a file that is taken, with its tile where the bounds are.
    @Test func theAdviceWorks() throws {
        let wrongRow = try file(row: 10, scheme: "xyz")
        #expect(try runProcess("/usr/bin/sqlite3", [wrongRow, "DELETE FROM metadata WHERE name = 'scheme'"]).status == 0)
        #expect(refusal(wrongRow) == nil)
        let xyz = try file(row: 5, scheme: "xyz")
        #expect(try runProcess("/usr/bin/sqlite3", [xyz, Self.flip("tiles") + "; DELETE FROM metadata WHERE name = 'scheme'"]).status == 0)
        #expect(refusal(xyz) == nil)
    }

    static func flip(_ table: String) -> String {
        "UPDATE \(table) SET tile_row = -1 - tile_row; UPDATE \(table) SET tile_row = (1 << zoom_level) + tile_row"
    }

    /// Found by an attack: the advised `UPDATE tiles SET tile_row = (1 << zoom_level) - 1 -
    /// tile_row` failed on real files: a unique index met a row moved onto one not yet moved
    /// (mbtileserver's cities), and `tiles` was a view over `map` (node-mbtiles). The advice now
    /// goes through negative rows, on `map` where `tiles` is a view, and works on both.
    @Test(arguments: [("mbtileserver-world_cities.mbtiles", "tiles"), ("node-mbtiles-plain_1.mbtiles", "map")])
    func theAdviceWorksOnRealFiles(_ fixture: String, _ table: String) throws {
        let path = work.file(fixture)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + fixture), toPath: path)
        #expect(chmod(path, 0o644) == 0)
        #expect(refusal(path) == nil, "the real file is taken as it is")
        let broken = try runProcess("/usr/bin/sqlite3", [path, Self.flip(table) + "; INSERT OR REPLACE INTO metadata VALUES ('scheme', 'xyz')"])
        #expect(broken.status == 0, "\(broken.stderr)")
        let reason = try #require(refusal(path))
        #expect(reason.contains(Self.flip(table)), "\(reason)")
        let followed = try runProcess("/usr/bin/sqlite3", [path, Self.flip(table) + "; DELETE FROM metadata WHERE name = 'scheme'"])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(refusal(path) == nil, "the advice followed gives the file back")
    }
}
