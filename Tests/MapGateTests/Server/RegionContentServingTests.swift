import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// What a region's file holds that the server must not pass on as it is: a NULL or empty tile,
/// attribution HTML that runs script, a zoom range that does not start at 0 (the issue "Bad
/// input, round two", items 7, 11 and the viewer's minzoom). The installed files are changed
/// after the install, so the server meets them whatever `sync` accepts.
@Suite(.serialized) struct RegionContentServingTests {
    let harness: SyncHarness
    let server: TileServer
    let client = HTTPClient()
    static let attribution =
        #"<a href="https://osm.example/copyright" onclick="steal()">© OSM</a> <img src=x onerror="alert(1)"><b>bold</b> <i>it</i> <a href="javascript:alert(2)">js</a> <script>alert(3)</script>"#

    init() throws {
        harness = try SyncHarness()
        try harness.builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf")
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        // Regions whose tiles start above zoom 0 (the viewer must start there): copies of the
        // fixtures without their lowest zooms, metadata to match (one zoom rule: tiles and metadata).
        for (id, fixture, lowest) in [("deep", "node-mbtiles-plain_1.mbtiles", 3), ("deepcities", "mbtileserver-world_cities.mbtiles", 2)] {
            let copy = harness.work.file("\(id).mbtiles")
            try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + fixture), toPath: copy)
            let table = id == "deep" ? "map" : "tiles"
            try Self.sqlite(copy, """
                DELETE FROM \(table) WHERE zoom_level < \(lowest);
                DELETE FROM metadata WHERE name IN ('minzoom');
                INSERT INTO metadata VALUES ('minzoom', '\(lowest)');
                """)
            try harness.builder.add(id: id, source: copy, format: id == "deep" ? "png" : "pbf")
        }
        try harness.builder.add(id: "two..dots", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("two..dots")
        try harness.sync("cities")
        try harness.sync("plain")
        try harness.sync("deep")
        try harness.sync("deepcities")
        let attribution = Self.attribution.replacingOccurrences(of: "'", with: "''")
        // XYZ 1/0/1 is TMS row 0.
        try Self.sqlite(harness.directory.regionPath("plain"), """
            UPDATE images SET tile_data = NULL WHERE tile_id = (SELECT tile_id FROM map WHERE zoom_level = 1 AND tile_column = 0 AND tile_row = 0);
            DELETE FROM metadata WHERE name IN ('attribution', 'minzoom', 'maxzoom');
            INSERT INTO metadata VALUES ('attribution', '\(attribution)'), ('minzoom', '3'), ('maxzoom', '4');
            """)
        try Self.sqlite(harness.directory.regionPath("cities"), """
            UPDATE tiles SET tile_data = x'' WHERE zoom_level = 1 AND tile_column = 0 AND tile_row = 0;
            UPDATE tiles SET tile_data = NULL WHERE zoom_level = 1 AND tile_column = 1 AND tile_row = 0;
            DELETE FROM metadata WHERE name IN ('minzoom', 'maxzoom');
            INSERT INTO metadata VALUES ('minzoom', '2'), ('maxzoom', '6');
            """)
        try harness.recordAsInstalled("plain")
        try harness.recordAsInstalled("cities")
        var settings = HTTPServer.Settings()
        settings.readTimeout = 1
        settings.idleTimeout = 2
        let harness = harness
        server = try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(http: settings, leafletPath: "/usr/share/javascript/leaflet",
            maplibrePath: "/nonexistent"), makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
    }

    static func sqlite(_ path: String, _ sql: String) throws {
        let result = try runProcess("/usr/bin/sqlite3", [path, sql])
        guard result.status == 0 else { throw MissingFixture(path: "sqlite3: \(result.stderr)") }
    }

    func get(_ path: String) throws -> HTTPResponse {
        try client.get(HTTPRequest(url: server.baseURL + path))
    }

    /// A region id with dots in a row (the id pattern allows `two..dots`) is served; `..` as a
    /// path segment is still refused (found by an attack: every request for such a region was 400).
    @Test func dotsInARegionIDAreNoPathSegment() throws {
        #expect(try get("/two..dots/0/0/0.png").status == 200)
        #expect(try get("/two..dots.json").status == 200)
        // (Encoded: libcurl squashes a plain `/../` before sending.)
        for path in ["/two..dots/%2e%2e/plain.json", "/%2e/plain.json", "/plain//0/0/0.png", "/two..dots/%2E%2E%2Fplain.json"] {
            #expect(try get(path).status == 400, "\(path)")
        }
    }

    /// A damaged region's 500, which any web page may read (CORS), names none of the user's
    /// folders (found by an attack: it named the data directory, `/home/USER/…`).
    @Test func aDamagedRegionsAnswerNamesNoFolder() throws {
        try FileManager.default.removeItem(atPath: harness.directory.regionPath("deep"))
        var body = ""
        #expect(waitUntil {
            let answer = try? get("/deep/3/0/0.png")
            body = answer.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            return answer?.status == 500
        }, "\(body)")
        #expect(body.contains("…/regions/deep.mbtiles"), "\(body)")
        #expect(!body.contains(harness.directory.path), "\(body)")
        // Once the watcher has looked, the answer says the region is damaged, still without folders.
        #expect(waitUntil { (try? get("/deep/3/0/0.png")).map { String(decoding: $0.body, as: UTF8.self).contains("installed but damaged") } == true })
        let damaged = String(decoding: try get("/deep/3/0/0.png").body, as: UTF8.self)
        #expect(!damaged.contains(harness.directory.path), "\(damaged)")
    }

    /// The cut of folders in answers any page may read: the home folder first (a path in it may
    /// hold spaces; found by an attack: `…/alice home/My Maps/…` was left half there), then each
    /// other absolute path to its last two parts.
    @Test func foldersAreCutFromAnswersAnyPageMayRead() {
        #expect(
            TileRequestHandler.withoutFolders("the file /home/alice home/My Maps/data/regions/c.mbtiles is missing", home: "/home/alice home")
                == "the file ~/My Maps/data/regions/c.mbtiles is missing")
        #expect(TileRequestHandler.withoutFolders("(/media/alice/stick/regions/c.mbtiles: gone)", home: "/root") == "(…/regions/c.mbtiles: gone)")
        #expect(TileRequestHandler.withoutFolders("no folder here", home: nil) == "no folder here")
    }

    @Test func aNullTileIs404NotAnEmptyImage() throws {
        let response = try get("/plain/1/0/1.png")
        #expect(response.status == 404)
        #expect(response.header("Content-Type") != "image/png")
        #expect(String(decoding: response.body, as: UTF8.self).contains("1/0/1"))
        let vector = try get("/cities/1/1/1.pbf")
        #expect(vector.status == 404)
    }

    @Test func anEmptyVectorTileIs204() throws {
        let response = try get("/cities/1/0/1.pbf")
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        #expect(response.header("Content-Length") == nil, "RFC 9110 §8.6: a 204 carries no Content-Length")
    }

    @Test func attributionKeepsOnlyLinksBoldAndItalic() throws {
        let expected =
            #"<a href="https://osm.example/copyright">© OSM</a> &lt;img src=x onerror=&quot;alert(1)&quot;&gt;<b>bold</b> <i>it</i> <a>js</a> &lt;script&gt;alert(3)&lt;/script&gt;"#
        #expect(AttributionHTML.sanitized(Self.attribution) == expected)
        #expect(AttributionHTML.sanitized("<b>open <i>both") == "<b>open <i>both</i></b>")
        #expect(AttributionHTML.sanitized("</b>&copy; &#169; &bogus & <A HREF='http://x.example/?a=1&amp;b=2'>x</A>")
            == "&lt;/b&gt;&copy; &#169; &amp;bogus &amp; <a href=\"http://x.example/?a=1&amp;b=2\">x</a>")
        let tileJSON = try #require(try JSONSerialization.jsonObject(with: get("/plain.json").body) as? [String: Any])
        #expect(tileJSON["attribution"] as? String == expected)
        let page = String(decoding: try get("/view/plain").body, as: UTF8.self)
        #expect(!page.contains("<img"))
        #expect(!page.contains("onerror=\\\""))
        #expect(!page.contains("javascript:"))
    }

    @Test(arguments: [
        ["/view/plain", "/", "/view/cities", "/view/missing"],
    ])
    func everyHTMLPageHasAContentSecurityPolicy(paths: [String]) throws {
        for path in paths {
            let response = try get(path)
            #expect(response.header("Content-Type")?.hasPrefix("text/html") == true, "\(path)")
            let policy = try #require(response.header("Content-Security-Policy"), "\(path)")
            #expect(policy.contains("default-src 'none'"), "\(path): \(policy)")
            #expect(policy.contains("script-src"), "\(path): \(policy)")
            #expect(!policy.contains("'unsafe-inline'") && !policy.contains("'unsafe-eval'"), "\(path): \(policy)")
        }
    }

    @Test func viewerStartsWithinTheRegionsZoomRange() throws {
        let raster = String(decoding: try get("/view/deep").body, as: UTF8.self)
        // The page's data (`const page = …`), which its script reads: minZoom is page.minzoom.
        #expect(raster.contains(#""minzoom":3"#), "\(raster)")
        #expect(!raster.contains(#""minzoom":0"#))
        #expect(raster.contains("minZoom: page.minzoom"))
    }

    @Test func vectorViewerStartsWithinTheRegionsZoomRange() throws {
        let maplibre = try TemporaryDirectory()
        try Data("// stand-in".utf8).write(to: URL(fileURLWithPath: maplibre.file("maplibre-gl.js")))
        let harness = harness
        let other = try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(leafletPath: "/nonexistent",
            maplibrePath: maplibre.path), makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
        defer { other.stop() }
        let response = try client.get(HTTPRequest(url: other.baseURL + "/view/deepcities"))
        let page = String(decoding: response.body, as: UTF8.self)
        #expect(page.contains("new maplibregl.Map("), "\(page)")
        #expect(page.contains(#""minzoom":2"#) && page.contains("minZoom: page.minzoom"), "\(page)")
        #expect(response.header("Content-Security-Policy")?.contains("worker-src blob:") == true)
    }

    @Test func missingMapLibrePageTellsAnInstalledUserWhatToDo() throws {
        let page = String(decoding: try get("/view/cities").body, as: UTF8.self)
        #expect(page.contains("/nonexistent"))
        #expect(page.contains("maplibre-gl.js") && page.contains("maplibre-gl.css"))
        #expect(!page.contains("scripts/install-deps"))
        #expect(page.contains("maplibrePath"))
    }
}
