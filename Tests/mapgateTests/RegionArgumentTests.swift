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
        // The coordinates as an input method types digits, full-width.
        let wide = try mapgate.run(["tile", "東京", "０", "０", "０", "-o", workspace.work.file("w.png")])
        #expect(wide.status == 0, "\(wide.stderr)")
        #expect(FileManager.default.contents(atPath: workspace.work.file("w.png")) == FileManager.default.contents(atPath: workspace.work.file("t.png")))
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
        // Named twice, by its name and its id: checked once, removed once (found by an attack).
        let verified = try mapgate.run(["verify", "東京", "ＴＯＫＹＯ", "--json"])
        #expect(verified.status == 0 && verified.stdout.split(separator: "\n").count == 1, "\(verified.stdout)")
        let removed = try mapgate.run(["remove", "東京", "tokyo"])
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

    /// A name that is also another region's id as folded (a region named "Tokyo" beside the
    /// region `tokyo`) names neither: the run asks which, 64, and removes nothing, not even the
    /// other regions named with it (found by an attack: `remove Tokyo` removed `tokyo`). An id
    /// typed as it is still names its region; a name of letters alone (`Berlin`) names its region.
    @Test func aNameThatIsAnotherRegionsIDAsksWhich() throws {
        let fixture = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try workspace.builder.add(id: "kanto", source: fixture, format: "png", overrides: ["name": "Tokyo"])
        try workspace.builder.add(id: "deberlin", source: fixture, format: "png", overrides: ["name": "Berlin"])
        try workspace.builder.add(id: "tokyo23", source: fixture, format: "png", overrides: ["name": "東京23区"])
        try workspace.builder.write()
        #expect(try mapgate.run(["sync", "kanto", "tokyo", "osaka"]).status == 0)
        let removed = try mapgate.run(["remove", "osaka", "Tokyo"])
        #expect(removed.status == 64, "\(removed.stderr)")
        #expect(removed.stderr.contains("2 regions have this name (kanto, tokyo)"), "\(removed.stderr)")
        #expect(try installed() == ["kanto", "osaka", "tokyo"])
        let berlin = try mapgate.run(["sync", "Berlin", "--json"])
        #expect(berlin.status == 0 && berlin.stdout.contains(#""region":"deberlin""#), "\(berlin.stdout)\(berlin.stderr)")
        // Full-width digits, as an input method types them, in a name.
        let ward = try mapgate.run(["sync", "東京２３区", "--json"])
        #expect(ward.status == 0 && ward.stdout.contains(#""region":"tokyo23""#), "\(ward.stdout)\(ward.stderr)")
        // Half-width katakana, as some Japanese input methods type them, in a name (the voiced
        // marks as marks of their own: `ｶﾞ` is `ガ`); and the other way round.
        try workspace.builder.add(id: "guide", source: fixture, format: "png", overrides: ["name": "ガイドマップ"])
        try workspace.builder.add(id: "narrow", source: fixture, format: "png", overrides: ["name": "ﾎﾟｰﾄ"])
        try workspace.builder.write()
        let guide = try mapgate.run(["sync", "ｶﾞｲﾄﾞﾏｯﾌﾟ", "ポート", "--json"])
        #expect(guide.status == 0 && guide.stdout.contains(#""region":"guide""#) && guide.stdout.contains(#""region":"narrow""#), "\(guide.stdout)\(guide.stderr)")
        #expect(try mapgate.run(["remove", "guide", "narrow"]).status == 0)
        #expect(try mapgate.run(["remove", "tokyo"]).status == 0)
        #expect(try installed() == ["deberlin", "kanto", "osaka", "tokyo23"])
        // A name of an id's form names its region when no region has that id.
        try workspace.builder.add(id: "kyoto", source: fixture, format: "png", overrides: ["name": "kyoto_city"])
        try workspace.builder.write()
        let kyoto = try mapgate.run(["sync", "kyoto_city", "--json"])
        #expect(kyoto.status == 0 && kyoto.stdout.contains(#""region":"kyoto""#), "\(kyoto.stdout)\(kyoto.stderr)")
        #expect(try mapgate.run(["tile", "kyoto_city", "0", "0", "0", "-o", workspace.work.file("k.png")]).status == 0)
    }

    /// Paths, control characters, spaces at either end and the server's routes are refused before
    /// anything runs, by every command that takes a region (found by an attack: all but `sync`
    /// said "not installed", 1, and `tile ./../../victim` opened `victim.pending.json` beside the
    /// data directory). `remove` alone takes them, to remove a row changed by hand
    /// (`RegionIDTamperTests`).
    @Test(arguments: [
        ("../x", "is not of the form"), ("./../../victim", "is not of the form"), ("a\u{1B}[31mb", "is not of the form"),
        (" tokyo", "has a space at its start or end"), ("\u{3000}東京", "has a space at its start or end"), ("ｖｉｅｗ", "is reserved for the tile server's routes"),
    ])
    func whatCanNameNoRegionIsAUsageError(_ typed: String, _ reason: String) throws {
        let out = workspace.work.file("out")
        for command in [["sync", typed], ["tile", typed, "0", "0", "0", "-o", out], ["verify", typed], ["export", typed, out + ".pmtiles"], ["open", typed]] {
            let result = try mapgate.run(command)
            #expect(result.status == 64, "\(command[0]): \(result.stderr)")
            #expect(result.stderr.contains(reason), "\(command[0]): \(result.stderr)")
        }
        #expect(workspace.origin.requests.isEmpty)
    }
}
