import Foundation
import MapGate
import MapGateDemo
import TestSupport
@testable import mapgate
import Testing

/// Issue 38, item 5: what real files and real clients meet.
@Suite struct RealWriterFilesTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.writeConfig([:])
    }

    /// A PMTiles archive given to `publish` is read as one when it is called `.pmtiles` (issue 39:
    /// this one is then refused for having no version, not for its format) and named as one, with
    /// the way to convert it, when it was renamed `.mbtiles`.
    @Test(arguments: ["world.pmtiles", "world.mbtiles"])
    func aPMTilesArchiveIsNamedAsOne(_ name: String) throws {
        let input = work.file("in-\(name)")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"), toPath: input + "/" + name)
        let result = try mapgate.run(["publish", input, "--out", work.file("out"), "--dry-run"])
        #expect(result.status == 65, "\(result.stderr)")
        if name.hasSuffix(".pmtiles") {
            #expect(result.stderr.contains("world.pmtiles: no version") && !result.stderr.contains("pmtiles convert"), "\(result.stderr)")
            return
        }
        #expect(result.stderr.contains("PMTiles archive") && result.stderr.contains("pmtiles convert"), "\(result.stderr)")
        #expect(!result.stderr.contains("no .mbtiles file in it") && !result.stderr.contains("not a readable SQLite file"), "\(result.stderr)")
    }

    /// Found by an attack: vector tiles stored zlib-compressed (as some older writers stored them;
    /// publish and sync take them) were served as they were, without a Content-Encoding, so no map
    /// could read them, and `export` refused them. Served unpacked to every client, exported gzipped.
    @Test func zlibVectorTilesAreServedUnpackedAndExportedGzipped() throws {
        let workspace = try CLIWorkspace()
        let source = workspace.work.file("zl.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: source)
        let recompress = try runProcess("/usr/bin/python3", ["-c", """
            import sqlite3, gzip, zlib
            db = sqlite3.connect('\(source)')
            for z, x, y, d in db.execute('SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles').fetchall():
                db.execute('UPDATE tiles SET tile_data = ? WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?', (zlib.compress(gzip.decompress(d)), z, x, y))
            db.commit()
            """])
        #expect(recompress.status == 0, "\(recompress.stderr)")
        try workspace.builder.add(id: "zl", source: source, version: "1", format: "pbf")
        try workspace.builder.write()
        let client = workspace.mapgate
        try client.configure(["catalogURL": workspace.catalogURL])
        let sync = try client.run(["sync", "zl"])
        #expect(sync.status == 0, "\(sync.stderr)")

        let server = try client.serve()
        defer { server.process.signal(SIGTERM) }
        for encoding in ["gzip", "identity"] {
            let body = workspace.work.file("tile-" + encoding)
            let answer = try runProcess("/usr/bin/curl", ["-s", "-D", "-", "-o", body, "-H", "Accept-Encoding: " + encoding, server.base + "/zl/0/0/0.pbf"])
            #expect(answer.stdout.hasPrefix("HTTP/1.1 200") && !answer.stdout.lowercased().contains("content-encoding"), "\(answer.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: body)).first == 0x1A, "a protobuf Tile, unpacked (\(encoding))")
        }

        let archive = workspace.work.file("zl.pmtiles")
        let export = try client.run(["export", "zl", archive])
        #expect(export.status == 0, "\(export.stderr)")
        if PMTilesReference.isInstalled {
            let tiles = try PMTilesReference.tiles(archive)
            #expect(!tiles.isEmpty && tiles.values.allSatisfy { GzipInflater.isGzip($0) }, "every tile gzip, as the archive's header says")
        }
    }

    /// Item 5: every TileJSON document the server writes validates against TileJSON 3.0.0's own
    /// JSON Schema, checked by python `jsonschema` (raster regions too: `vector_layers` is
    /// required, `[]` for them; a publisher's version in TileJSON's semver form, or left out).
    @Test func tileJSONValidatesAgainstTheSpecificationsSchema() throws {
        let schema = try TestPaths.shared("tilejson/schema-3.0.0.json")
        let workspace = try CLIWorkspace()
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png", version: "2026.11")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png", version: "v7-beta")
        try workspace.offer("cities", fixture: "mbtileserver-world_cities.mbtiles", format: "pbf", version: "3")
        try workspace.mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try workspace.mapgate.run(["sync", "plain", "geo", "cities"]).status == 0)
        let started = try workspace.mapgate.serve()
        defer { started.process.stop() }
        for id in ["plain", "geo", "cities"] {
            let document = try HTTPClient().get(HTTPRequest(url: started.base + "/\(id).json"))
            #expect(document.status == 200)
            let file = workspace.work.file("\(id).tilejson")
            try document.body.write(to: URL(fileURLWithPath: file))
            let check = try runProcess("/usr/bin/python3", [
                "-c", "import json, sys, jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))",
                schema, file,
            ])
            #expect(check.status == 0, "\(id): \(check.stderr)")
        }
        let plain = try JSONDecoder().decode(TileJSON.self, from: try HTTPClient().get(HTTPRequest(url: started.base + "/plain.json")).body)
        #expect(plain.version == "2026.11.0" && plain.vectorLayers == [])
        let geo = try JSONDecoder().decode(TileJSON.self, from: try HTTPClient().get(HTTPRequest(url: started.base + "/geo.json")).body)
        #expect(geo.version == nil)
    }

    /// Item 5: 512-pixel raster tiles (metadata `tileSize` 512, as QGIS and `pmtiles convert`
    /// write it) are announced as such in the generated style; others stay 256.
    @Test func aRasterStyleSaysTheFilesTileSize() throws {
        let workspace = try CLIWorkspace()
        let big = workspace.work.file("big.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: big)
        #expect(try runProcess("/usr/bin/sqlite3", [big, "INSERT INTO metadata VALUES ('tileSize', '512')"]).status == 0)
        try workspace.builder.add(id: "big", source: big, format: "png")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try workspace.mapgate.run(["sync", "big", "plain"]).status == 0)
        let started = try workspace.mapgate.serve()
        defer { started.process.stop() }
        for (id, size) in [("big", 512), ("plain", 256)] {
            let style = try JSONSerialization.jsonObject(with: try HTTPClient().get(HTTPRequest(url: started.base + "/\(id)/style.json")).body) as? [String: Any]
            let source = (style?["sources"] as? [String: Any])?[id] as? [String: Any]
            #expect(source?["tileSize"] as? Int == size, "\(id): \(String(describing: source))")
        }
    }

    /// `OPTIONS *` asks about the server as a whole: 204 with what it allows, not 400.
    @Test func optionsStarSaysWhatTheServerAllows() throws {
        let started = try mapgate.serve()
        defer { started.process.stop() }
        let answer = try runProcess("/usr/bin/curl", ["-si", "-X", "OPTIONS", "--request-target", "*", started.base + "/"])
        #expect(answer.stdout.hasPrefix("HTTP/1.1 204"), "\(answer.stdout)")
        #expect(answer.stdout.contains("Allow: GET, HEAD, OPTIONS"), "\(answer.stdout)")
    }

    /// Item 4: TileJSON and the generated style carry an ETag and answer 304 to a client that has
    /// them, so a reloaded viewer (or a caching proxy) does not download them again.
    @Test func tileJSONAndStyleAreRevalidated() throws {
        let workspace = try CLIWorkspace()
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try workspace.mapgate.run(["sync", "plain"]).status == 0)
        let started = try workspace.mapgate.serve()
        defer { started.process.stop() }
        for path in ["/plain.json", "/plain/style.json"] {
            let first = try HTTPClient().get(HTTPRequest(url: started.base + path))
            #expect(first.status == 200)
            let etag = try #require(first.header("ETag"), "\(path): no ETag")
            #expect(first.header("Cache-Control") == "no-cache")
            var again = HTTPRequest(url: started.base + path)
            again.headers.append((name: "If-None-Match", value: etag))
            let revalidated = try HTTPClient().get(again)
            #expect(revalidated.status == 304, "\(path)")
            #expect(revalidated.body.isEmpty)
            var other = HTTPRequest(url: started.base + path)
            other.headers.append((name: "If-None-Match", value: "\"something-else\""))
            #expect(try HTTPClient().get(other).status == 200)
        }
    }

    /// Cosmetic: a small region's bounds were rounded to 4 significant digits, so west read the
    /// same as east; `list` now shows as many digits as tell them apart.
    @Test func aSmallRegionsBoundsStayApartInList() throws {
        let workspace = try CLIWorkspace()
        let small = workspace.work.file("small.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: small)
        let edit = try runProcess("/usr/bin/sqlite3", [small, "INSERT OR REPLACE INTO metadata VALUES ('bounds', '126.971,37.561,126.978,37.567')"])
        try #require(edit.status == 0, "\(edit.stderr)")
        try workspace.builder.add(id: "small", source: small, format: "png", overrides: ["bounds": [126.971, 37.561, 126.978, 37.567]])
        try workspace.builder.write()
        try workspace.mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try workspace.mapgate.run(["sync", "small"]).status == 0)
        let list = try workspace.mapgate.run(["list"])
        #expect(list.stdout.contains("126.97,37.561,126.98,37.567"), "west and east apart: \(list.stdout)")
        #expect(ListCommand.boundsText([126.9781, 37.5665, 126.9782, 37.5666]) == "126.9781,37.5665,126.9782,37.5666")
        #expect(ListCommand.boundsText([-180, -85.0511, 180, 85.0511]) == "-180,-85.05,180,85.05")
    }
}

