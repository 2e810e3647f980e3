import Foundation
import MapGate
import TestSupport
import Testing

/// A region named on the command line as a user of a Chinese, Japanese or Korean input method
/// types it: the id in full-width letters (`ｔｏｋｙｏ`), with capitals, or the region's name as the
/// catalog and `list` show it (`東京`). Each was a usage error or "not installed" (found by an
/// attack on the languages: `mapgate tile ｇｅｏ 0 0 0` said geo was not installed, with geo
/// installed).
@Suite struct RegionArgumentTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        let fixture = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try workspace.builder.add(id: "tokyo", source: fixture, format: "png", overrides: ["name": "東京"])
        try workspace.builder.add(id: "osaka", source: fixture, format: "png", overrides: ["name": "大阪"])
        try workspace.builder.write()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    func installed() throws -> [String] {
        try mapgate.run(["list", "--json"]).stdout.split(separator: "\n").compactMap { line in
            try MapGateBinary.json(String(line))["id"] as? String
        }
    }

    @Test func anIDInFullWidthLettersOrCapitalsIsTheID() throws {
        let synced = try mapgate.run(["sync", "ｔｏｋｙｏ", "--json"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains(#""region":"tokyo""#), "\(synced.stdout)")
        #expect(try installed() == ["tokyo"])
        let tile = try mapgate.run(["tile", "Ｔｏｋｙｏ", "0", "0", "0", "-o", workspace.work.file("t.png")])
        #expect(tile.status == 0, "\(tile.stderr)")
        #expect(try mapgate.run(["verify", "TOKYO"]).status == 0)
        let removed = try mapgate.run(["remove", "ＴＯＫＹＯ"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed tokyo"), "\(removed.stdout)")
        #expect(try installed().isEmpty)
    }

    @Test func aRegionsNameNamesIt() throws {
        let synced = try mapgate.run(["sync", "東京", "--json"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains(#""region":"tokyo""#), "\(synced.stdout)")
        #expect(try installed() == ["tokyo"])
        let tile = try mapgate.run(["tile", "東京", "0", "0", "0", "-o", workspace.work.file("t.png")])
        #expect(tile.status == 0, "\(tile.stderr)")
        let export = try mapgate.run(["export", "東京", workspace.work.file("tokyo.pmtiles")])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("exported tokyo"), "\(export.stdout)")
        // A name no region has is said so, with what there is: nothing is installed for it.
        let unknown = try mapgate.run(["sync", "名古屋"])
        #expect(unknown.status == 1, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("region 名古屋: not in the catalog (offered: tokyo, osaka)"), "\(unknown.stderr)")
        let notInstalled = try mapgate.run(["tile", "大阪", "0", "0", "0", "-o", workspace.work.file("o.png")])
        #expect(notInstalled.status == 1, "\(notInstalled.stderr)")
        #expect(notInstalled.stderr.contains("region 大阪: not installed (installed: tokyo)"), "\(notInstalled.stderr)")
        let removed = try mapgate.run(["remove", "東京"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try installed().isEmpty)
    }

    /// A name two regions have is no region's: the run says both ids and does nothing (64).
    @Test func aNameOfTwoRegionsAsksForTheID() throws {
        let fixture = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try workspace.builder.add(id: "tokyo-west", source: fixture, format: "png", overrides: ["name": "東京"])
        try workspace.builder.write()
        let synced = try mapgate.run(["sync", "東京"])
        #expect(synced.status == 64, "\(synced.stderr)")
        #expect(synced.stderr.contains("2 regions have this name (tokyo, tokyo-west): give the id of the one you mean"), "\(synced.stderr)")
        #expect(try installed().isEmpty)
        #expect(try mapgate.run(["sync", "tokyo", "tokyo-west"]).status == 0)
        let tile = try mapgate.run(["tile", "東京", "0", "0", "0", "-o", workspace.work.file("t.png")])
        #expect(tile.status == 64, "\(tile.stderr)")
        #expect(tile.stderr.contains("(tokyo, tokyo-west)"), "\(tile.stderr)")
        #expect(try installed() == ["tokyo", "tokyo-west"])
    }

    /// Paths, control characters and the server's routes are still refused before anything runs.
    @Test(arguments: ["../x", "a\u{1B}[31mb", " tokyo", "ｖｉｅｗ"])
    func whatCanNameNoRegionIsAUsageError(_ typed: String) throws {
        let result = try mapgate.run(["sync", typed])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(workspace.origin.requests.isEmpty)
    }
}
