import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Where the viewers put a region and how large they draw its tiles. Regions whose bounds cross
/// the antimeridian (west east of east, `170,-25,-170,-5`, as MBTiles writers put them), found by
/// an attack: the vector viewer asked for no tile (MapLibre took TileJSON's wrapped bounds, which
/// TileJSON forbids, for an empty area) and the raster viewer opened on the rest of the world.
/// Each viewer must open on the region and ask for its tiles on both sides of the antimeridian.
@Suite(.tags(.browser)) struct ViewerGeometryBrowserTests {
    /// The tiles `log` (a server's `--verbose` lines) shows asked for of `region`: zoom and x.
    static func tilesAsked(of region: String, in log: String) -> [(z: Int, x: Int)] {
        log.matches(of: try! Regex("/\(region)/([0-9]+)/([0-9]+)/[0-9]+\\.(png|pbf)")).compactMap { match in
            guard let z = match.output[1].substring.flatMap({ Int($0) }), let x = match.output[2].substring.flatMap({ Int($0) }) else { return nil }
            return (z, x)
        }
    }

    /// Where a tile's x lies round the world, 0 at 180° W to 1 at 180° E (its middle).
    static func across(_ tile: (z: Int, x: Int)) -> Double {
        (Double(tile.x) + 0.5) / Double(1 << tile.z)
    }

    /// The demo region's raster file with `sql` run on it, offered as `id` (tiles up to `maxzoom`),
    /// synced into a fresh workspace and opened with `open --verbose` (every request on stderr).
    func openDemoWorld(
        as id: String, editedBy sql: String, maxzoom: Int
    ) throws -> (work: TemporaryDirectory, origin: TestOrigin, opened: BackgroundProcess, url: String) {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        let work = try TemporaryDirectory()
        let file = work.file(id + ".mbtiles")
        let unpacked = try runProcess("/bin/sh", ["-c", "gzip -dc \"$0\" > \"$1\"", TestPaths.fixtures + "/regions/demo-world.mbtiles.gz", file])
        try #require(unpacked.status == 0, "\(unpacked.stderr)")
        let set = try runProcess("/usr/bin/sqlite3", [file, sql])
        try #require(set.status == 0, "\(set.stderr)")
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        let origin = try TestOrigin(root: work.file("www"))
        let builder = CatalogBuilder(root: work.file("www"))
        try builder.add(id: id, source: file, format: "png", maxzoom: maxzoom)
        try builder.write()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json"])
        let synced = try mapgate.run(["sync", id])
        try #require(synced.status == 0, "\(synced.stderr)")
        let opened = try mapgate.start(["open", id, "--verbose"])
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        return (work, origin, opened, url)
    }

    @Test func theVectorViewerDrawsARegionAcrossTheAntimeridian() throws {
        // ogr2ogr (GDAL 3.x) writes a tile at column 1 of zoom 0 for points on both sides of the
        // antimeridian, outside the grid: removed as mapgate's refusal of such a file says.
        let islands: [(String, Double, Double)] = [("Tarawa", 172.98, 1.45), ("Majuro", 171.38, 7.09), ("Apia", -171.77, -13.83), ("Pago Pago", -170.70, -14.28)]
        let region = try PointRegion(
            id: "pacific", points: islands.map { (["name": $0.0], $0.1, $0.2) }, maxzoom: 6, metadata: ["bounds": "165,-20,-165,10"],
            sql: "DELETE FROM tiles WHERE tile_column >= (1 << zoom_level) OR tile_row >= (1 << zoom_level)")
        defer { region.origin.stop() }
        let opened = try region.mapgate.start(["open", "pacific", "--verbose"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let served = try HTTPClient().get(HTTPRequest(url: url.replacingOccurrences(of: "/view/pacific", with: "/pacific.json")))
        let bounds = try #require((try JSONSerialization.jsonObject(with: served.body) as? [String: Any])?["bounds"] as? [Double])
        #expect(bounds == [-180, -20, 180, 10], "TileJSON's bounds must not wrap: \(bounds)")
        let dot = try #require(VectorViewerBrowserTests.rgb(VectorStyle.color(index: 0)))
        // Four dots of a few dozen pixels each in the 800×600 screenshot.
        func drawn(_ image: PNGImage) -> Bool { image.fraction(near: [dot], tolerance: 40) * 480_000 >= 40 }
        let (image, console) = try VectorViewerBrowserTests.renderUntilDrawn(url, in: region.work, origin: region.origin, drawn: drawn)
        #expect(drawn(image), "the islands are not drawn; console: \(console.suffix(2000))")
        let asked = Self.tilesAsked(of: "pacific", in: opened.stderr)
        #expect(asked.contains { Self.across($0) > 0.9 } && asked.contains { Self.across($0) < 0.1 }, "tiles asked: \(asked)")
    }

    @Test func theRasterViewerOpensOnARegionAcrossTheAntimeridian() throws {
        let (work, origin, opened, url) = try openDemoWorld(
            as: "pacific",
            editedBy: "UPDATE metadata SET value = '150,-20,-150,20' WHERE name = 'bounds'; UPDATE metadata SET value = '2' WHERE name = 'maxzoom'; DELETE FROM tiles WHERE zoom_level > 2",
            maxzoom: 2)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let image = try ViewerBrowserTests.screenshot(url, in: work, waitMilliseconds: 8000)
        let covered = image.fraction(near: ViewerBrowserTests.tileColors)
        #expect(covered > 0.4, "only \(Int(covered * 100))% of the screenshot shows tile colours")
        // The view is the Pacific: tiles on both sides of the antimeridian, none of the Atlantic's.
        let asked = Self.tilesAsked(of: "pacific", in: opened.stderr)
        #expect(asked.contains { Self.across($0) > 0.75 } && asked.contains { Self.across($0) < 0.25 }, "tiles asked: \(asked)")
        #expect(!asked.contains { (0.3...0.7).contains(Self.across($0)) && $0.z >= 2 }, "tiles of the other side of the world asked: \(asked)")
    }

    /// A raster region of 512-pixel tiles (the metadata's `tileSize`, as QGIS and `pmtiles
    /// convert` write it) is drawn at that size, a zoom lower (found by an attack: its tiles were
    /// drawn at 256 pixels, shrunk to a quarter). The DOM after the map settled shows each tile's size.
    @Test func theRasterViewerDrawsLargeTilesAtTheirSize() throws {
        let (work, origin, opened, url) = try openDemoWorld(as: "large", editedBy: "INSERT INTO metadata VALUES ('tileSize', '512')", maxzoom: 3)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let dom = try runProcess(
            ViewerBrowserTests.chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(work.file("profile"))", "--window-size=800,600",
                "--virtual-time-budget=5000", "--dump-dom", url,
            ], environment: ["HOME": work.path], timeout: 90)
        let tiles = dom.stdout.matches(of: /<img[^>]*class="leaflet-tile[^"]*"[^>]*>/).map { String($0.output) }
        #expect(!tiles.isEmpty, "no tile in the DOM: \(dom.stdout.suffix(2000)) \(dom.stderr.suffix(1000))")
        #expect(tiles.allSatisfy { $0.contains("width: 512px") }, "\(tiles.prefix(3))")
    }
}
