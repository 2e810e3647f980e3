import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Headless Chromium, with SwiftShader's WebGL, renders vector regions in the MapLibre viewer:
/// the layer's colour must be on screen where the features are, and MapLibre must not complain
/// about the generated style in the console.
@Suite(.tags(.browser)) struct VectorViewerBrowserTests {
    static let maplibre = "/usr/local/share/mapgate/maplibre/maplibre-gl.js"

    /// A screenshot and the browser console of `url`.
    static func render(_ url: String, in work: TemporaryDirectory, budget: Int = 15000) throws -> (image: PNGImage, console: String) {
        guard FileManager.default.isExecutableFile(atPath: ViewerBrowserTests.chromium) else {
            throw MissingFixture(path: "\(ViewerBrowserTests.chromium) (Debian package chromium; .ci/run installs it)")
        }
        let shot = work.file("screenshot-\(UUID().uuidString).png")
        let result = try runProcess(
            ViewerBrowserTests.chromium,
            [
                "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
                "--user-data-dir=\(work.file("profile"))", "--window-size=800,600", "--virtual-time-budget=\(budget)",
                "--enable-logging=stderr", "--v=0", "--screenshot=\(shot)", url,
            ], environment: ["HOME": work.path], timeout: 120)
        guard FileManager.default.fileExists(atPath: shot) else { throw MissingFixture(path: "a screenshot (chromium: \(result.stderr))") }
        return (try PNGImage(contentsOf: shot), result.stderr)
    }

    /// Installs `source` as region `id` (pbf) in a fresh workspace and opens its viewer.
    func open(_ id: String, source: String, work: TemporaryDirectory) throws -> (MapGateBinary, BackgroundProcess, TestOrigin) {
        guard FileManager.default.fileExists(atPath: Self.maplibre) else {
            throw MissingFixture(path: "\(Self.maplibre) (scripts/install-deps unpacks it from the pinned maplibre wheel)")
        }
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        let origin = try TestOrigin(root: work.file("www"))
        let builder = CatalogBuilder(root: work.file("www"))
        try builder.add(id: id, source: source, format: "pbf", maxzoom: 14)
        try builder.write()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json"])
        let sync = try mapgate.run(["sync", id])
        #expect(sync.status == 0, "\(sync.stderr)")
        let opened = try mapgate.start(["open", id])
        return (mapgate, opened, origin)
    }

    /// Renders the viewer at `url` inside a page of `origin` that also asks for an image the origin
    /// holds back for `seconds` of real time: Chromium's virtual time waits for that request, so
    /// MapLibre's workers get real time to draw the tiles even on a busy machine (virtual time
    /// alone runs out while they work). Tries again with more time; still fails when the map
    /// never shows.
    static func renderUntilDrawn(
        _ url: String, in work: TemporaryDirectory, origin: TestOrigin, drawn: (PNGImage) -> Bool
    ) throws -> (image: PNGImage, console: String) {
        var last: (image: PNGImage, console: String)?
        for seconds in [10, 25, 50] {
            let name = "frame-\(UUID().uuidString).html"
            try work.write("www/" + name, """
                <!DOCTYPE html><html><body style="margin:0;overflow:hidden">
                <iframe src="\(url)" style="border:0;width:800px;height:600px"></iframe>
                <img src="/_fault/stall=\(seconds)/\(name)" style="display:none"></body></html>
                """)
            let rendered = try render(origin.baseURL + "/" + name, in: work, budget: 5000)
            if drawn(rendered.image) { return rendered }
            last = rendered
        }
        return try #require(last)
    }

    func errors(in console: String) -> [String] {
        console.split(separator: "\n").map(String.init).filter { $0.contains("CONSOLE") && ($0.contains("Error") || $0.contains("error")) }
    }

    @Test func citiesAreDrawnInTheirLayersColour() throws {
        let work = try TemporaryDirectory()
        let (_, opened, origin) = try open("cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), work: work)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let style = try HTTPClient().get(HTTPRequest(url: url.replacingOccurrences(of: "/view/cities", with: "/cities/style.json")))
        #expect(style.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: style.body) as? [String: Any])
        #expect(object["version"] as? Int == 8)
        let color = try #require(Self.rgb(VectorStyle.color(index: 0)))
        let (image, console) = try Self.renderUntilDrawn(url, in: work, origin: origin) { $0.fraction(near: [color], tolerance: 40) > 0.0003 }
        #expect(errors(in: console).isEmpty, "\(errors(in: console))")
        let dots = image.fraction(near: [color], tolerance: 40)
        // Cities are points: some pixels have the layer's colour, far from all of them.
        #expect(dots > 0.0003, "only \(dots) of the screenshot in the layer's colour \(VectorStyle.color(index: 0)); console: \(console.suffix(3000))")
        #expect(dots < 0.2)
    }

    /// Issue "vector maps with labels": the cities' names are drawn beside them, in the label
    /// colour, from glyphs this server made from the machine's fonts; the style names its glyphs.
    @Test func cityNamesAreDrawnBesideTheCities() throws {
        let work = try TemporaryDirectory()
        let (_, opened, origin) = try open("cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), work: work)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let base = url.replacingOccurrences(of: "/view/cities", with: "")
        let style = try #require(try JSONSerialization.jsonObject(with: try HTTPClient().get(HTTPRequest(url: base + "/cities/style.json")).body) as? [String: Any])
        let glyphs = try #require(style["glyphs"] as? String)
        #expect(glyphs.hasSuffix("/fonts/{fontstack}/{range}.pbf"))
        let labels = (style["layers"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "symbol" }
        let font = try #require(((labels.first?["layout"] as? [String: Any])?["text-font"] as? [String])?.first)
        let range = try HTTPClient().get(HTTPRequest(url: base + "/fonts/" + font.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)! + "/0-255.pbf"))
        #expect(range.status == 200)
        #expect(range.header("Content-Type") == "application/x-protobuf")
        try expectLettering(url, work: work, origin: origin, atLeast: 150)
    }

    /// Renders the viewer at `url` until at least `pixels` of the label colour lie within 40 px of
    /// the layer's dots (the names beside them), with no console errors.
    func expectLettering(_ url: String, work: TemporaryDirectory, origin: TestOrigin, atLeast pixels: Int) throws {
        let dot = try #require(Self.rgb(VectorStyle.color(index: 0)))
        let ink = try #require(Self.rgb(VectorStyle.labelColor))
        func lettering(_ image: PNGImage) -> Int { image.count(near: ink, tolerance: 60, within: 40, of: dot, anchorTolerance: 40) }
        let (image, console) = try Self.renderUntilDrawn(url, in: work, origin: origin) { lettering($0) >= pixels }
        #expect(errors(in: console).isEmpty, "\(errors(in: console))")
        #expect(lettering(image) >= pixels, "only \(lettering(image)) pixels of lettering near the dots; console: \(console.suffix(3000))")
    }

    /// Chinese names (a region made with GDAL's ogr2ogr) are drawn too: their glyphs come from a
    /// CJK font after the Latin one in the style's fontstack.
    @Test func chineseNamesAreDrawn() throws {
        let work = try TemporaryDirectory()
        let cities = [("北京", 116.4, 39.9), ("上海", 121.5, 31.2), ("广州", 113.3, 23.1), ("成都", 104.1, 30.7), ("西安", 108.9, 34.3), ("沈阳", 123.4, 41.8)]
        let features = cities.map { #"{"type":"Feature","properties":{"name":"\#($0.0)"},"geometry":{"type":"Point","coordinates":[\#($0.1),\#($0.2)]}}"# }
        try work.write("cn.geojson", #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#)
        let made = try runProcess(
            "/usr/bin/ogr2ogr", ["-f", "MBTILES", work.file("cn.mbtiles"), work.file("cn.geojson"), "-dsco", "MAXZOOM=5", "-nln", "places"])
        #expect(made.status == 0, "ogr2ogr (Debian package gdal-bin): \(made.stderr)")
        let (_, opened, origin) = try open("cn", source: work.file("cn.mbtiles"), work: work)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        try expectLettering(url, work: work, origin: origin, atLeast: 60)
    }

    @Test func polygonsAreFilledAndLinesDrawn() throws {
        let work = try TemporaryDirectory()
        try work.write(
            "shapes.geojson",
            """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","properties":{"name":"square"},"geometry":{"type":"Polygon","coordinates":[[[-60,-40],[60,-40],[60,40],[-60,40],[-60,-40]]]}},
            {"type":"Feature","properties":{"name":"road"},"geometry":{"type":"LineString","coordinates":[[-170,60],[170,60]]}}]}
            """)
        let made = try runProcess(
            "/usr/bin/ogr2ogr", ["-f", "MBTILES", work.file("shapes.mbtiles"), work.file("shapes.geojson"), "-dsco", "MAXZOOM=4", "-nln", "shapes"])
        #expect(made.status == 0, "ogr2ogr (Debian package gdal-bin): \(made.stderr)")
        let (_, opened, origin) = try open("shapes", source: work.file("shapes.mbtiles"), work: work)
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
            origin.stop()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let color = try #require(Self.rgb(VectorStyle.color(index: 0)))
        let (image, console) = try Self.renderUntilDrawn(url, in: work, origin: origin) { $0.fraction(near: [color], tolerance: 40) > 0.0005 }
        #expect(errors(in: console).isEmpty, "\(errors(in: console))")
        // The fill: 35 % of the layer's colour over the light background.
        let background = (244.0, 243.0, 238.0)
        let fill = (
            UInt8(0.35 * Double(color.0) + 0.65 * background.0), UInt8(0.35 * Double(color.1) + 0.65 * background.1),
            UInt8(0.35 * Double(color.2) + 0.65 * background.2))
        let filled = image.fraction(near: [fill], tolerance: 20)
        #expect(filled > 0.05, "only \(filled) of the screenshot is the fill colour \(fill)")
        let outlined = image.fraction(near: [color], tolerance: 40)
        #expect(outlined > 0.0005, "the road and the square's outline: \(outlined)")
    }

    /// The update-required notice covers the vector map too once the gate closes.
    @Test func theUpdateNoticeCoversTheVectorMapOnceTheGateCloses() throws {
        let work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        try work.write("www/lookup.json", #"{"resultCount":1,"results":[{"trackId":1,"version":"9.0","trackViewUrl":"https://apps.example/m"}]}"#)
        let origin = try TestOrigin(root: work.file("www"))
        defer { origin.stop() }
        let builder = CatalogBuilder(root: work.file("www"))
        try builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf", maxzoom: 14)
        try builder.write()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json", "appID": 1, "lookupURL": origin.baseURL + "/lookup.json", "maxPrompts": 2])
        #expect(try mapgate.run(["sync", "cities"], at: "2027-01-01 00:00:00").status == 0)
        let opened = try mapgate.start(["open", "cities"], at: "2027-02-10 00:00:00", environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        // Another mapgate spends the last use; the running server closes within its refresh.
        #expect(try mapgate.run(["tile", "cities", "0", "0", "0", "-o", work.file("t.pbf")], at: "2027-02-10 00:00:05").status == 0)
        #expect(try waitUntil { try HTTPClient().get(HTTPRequest(url: url)).status == 403 })
        let (image, _) = try Self.render(url, in: work)
        let color = try #require(Self.rgb(VectorStyle.color(index: 0)))
        #expect(image.fraction(near: [color], tolerance: 40) < 0.0001)
        #expect(image.fraction(near: [(253, 236, 234)], tolerance: 4) > 0.02, "the update-required notice is not on screen")
    }

    static func rgb(_ hex: String) -> (UInt8, UInt8, UInt8)? {
        guard hex.count == 7, let value = UInt32(hex.dropFirst(), radix: 16) else { return nil }
        return (UInt8(value >> 16), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF))
    }
}
