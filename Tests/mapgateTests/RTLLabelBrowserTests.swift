import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Issue 41: Arabic, Persian and Hebrew labels in the vector viewer, shaped and ordered by mapgate's
/// right-to-left text plugin, rendered by headless Chromium. What MapLibre asks the glyph server
/// for shows what it drew: shaped Arabic is in the presentation forms (U+FE70–U+FEFF: the range
/// 65024–65279), never in the plain letters' range (1536–1791), which is what it asks for when it
/// draws the letters unshaped, as it does without the plugin (the control).
@Suite(.tags(.browser)) struct RTLLabelBrowserTests {
    static let plugin = "/usr/local/share/mapgate/maplibre/" + MapLibreFiles.rtlTextPlugin

    /// Names of places, as a reader of each language writes them, some mixed with digits and Latin.
    static let places: [(String, Double, Double)] = [
        ("القاهرة", 31.2, 30.0), ("تهران", 51.4, 35.7), ("ירושלים", 35.2, 31.8), ("بغداد 2024", 44.4, 33.3),
        ("دبي (Dubai)", 55.3, 25.2), ("תל אביב-יפו", 34.8, 32.1), ("الرياض", 46.7, 24.7),
    ]

    /// Serves a region of `places` with `open --verbose` (every request on stderr), renders its
    /// viewer until its labels are drawn, and returns what the server logged.
    func render(maplibrePath: String?) throws -> String {
        guard FileManager.default.fileExists(atPath: Self.plugin) else {
            throw MissingFixture(path: "\(Self.plugin) (scripts/install-deps builds it with scripts/build-rtl-plugin)")
        }
        var config: [String: Any] = [:]
        if let maplibrePath { config["maplibrePath"] = maplibrePath }
        let region = try PointRegion(id: "places", points: Self.places.map { (["name": $0.0], $0.1, $0.2) }, maxzoom: 5, config: config)
        let (work, origin, mapgate) = (region.work, region.origin, region.mapgate)
        defer { origin.stop() }
        let opened = try mapgate.start(["open", "places", "--verbose"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let ink = try #require(VectorViewerBrowserTests.rgb(VectorStyle.labelColor))
        let dot = try #require(VectorViewerBrowserTests.rgb(VectorStyle.color(index: 0)))
        func lettering(_ image: PNGImage) -> Int { image.count(near: ink, tolerance: 60, within: 40, of: dot, anchorTolerance: 40) }
        let (image, console) = try VectorViewerBrowserTests.renderUntilDrawn(url, in: work, origin: origin) { lettering($0) >= 40 }
        #expect(lettering(image) >= 40, "labels not drawn; console: \(console.suffix(2000))")
        return opened.stderr
    }

    @Test func arabicIsShapedAndHebrewDrawnWithThePlugin() throws {
        let log = try render(maplibrePath: nil)
        #expect(log.contains("/_maplibre/\(MapLibreFiles.rtlTextPlugin)"), "the viewer did not load the plugin: \(log.suffix(3000))")
        #expect(log.contains("/65024-65279.pbf"), "no Arabic presentation forms were asked for: \(log.suffix(3000))")
        #expect(log.contains("/1280-1535.pbf"), "no Hebrew glyphs were asked for")
        #expect(!log.contains("/1536-1791.pbf"), "plain Arabic letters were asked for: a label was drawn unshaped")
    }

    /// The control: the same page without the plugin draws the plain letters, unshaped.
    @Test func withoutThePluginArabicIsDrawnUnshaped() throws {
        let bare = try TemporaryDirectory()
        for name in ["maplibre-gl.js", "maplibre-gl.css"] {
            try FileManager.default.copyItem(atPath: "/usr/local/share/mapgate/maplibre/" + name, toPath: bare.file(name))
        }
        let log = try render(maplibrePath: bare.path)
        #expect(!log.contains(MapLibreFiles.rtlTextPlugin))
        #expect(log.contains("/1536-1791.pbf"), "\(log.suffix(3000))")
        #expect(!log.contains("/65024-65279.pbf"))
    }
}

/// Issue 37, part 4: the vector viewer's label switch. The page is English; the switch's choice in
/// the address (`#labels=ko`, as the menu writes it when it changes) makes the viewer load the
/// generated style labelled with `name:ko`. (MapLibre draws Hangul and CJK labels with the
/// browser's own fonts, `localIdeographFontFamily`, so the choice shows in the style it loads,
/// not in glyph requests.)
@Suite(.tags(.browser)) struct LabelLanguageBrowserTests {
    @Test func theSwitchLabelsInTheChosenLanguage() throws {
        guard FileManager.default.fileExists(atPath: VectorViewerBrowserTests.maplibre) else {
            throw MissingFixture(path: "\(VectorViewerBrowserTests.maplibre) (scripts/install-deps)")
        }
        let places = [("Seoul", "서울", 127.0, 37.6), ("Busan", "부산", 129.1, 35.2), ("Incheon", "인천", 126.7, 37.5), ("Daegu", "대구", 128.6, 35.9)]
        let region = try PointRegion(id: "kr", points: places.map { (["name": $0.0, "name:ko": $0.1], $0.2, $0.3) }, maxzoom: 6)
        let (work, origin, mapgate) = (region.work, region.origin, region.mapgate)
        defer { origin.stop() }
        let opened = try mapgate.start(["open", "kr", "--verbose"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let base = url.replacingOccurrences(of: "/view/kr", with: "")
        let korean = String(decoding: try HTTPClient().get(HTTPRequest(url: base + "/kr/style.json?labels=ko")).body, as: UTF8.self)
        #expect(korean.contains(#""name:ko""#), "\(korean)")
        #expect(try HTTPClient().get(HTTPRequest(url: base + "/kr/style.json?labels=fr")).status == 400)
        // The style the viewer loads, as the page says it chose: each render adds one request of it.
        func loads(_ line: String) -> Int { opened.stderr.components(separatedBy: line).count - 1 }
        func render(_ fragment: String) throws {
            let ink = try #require(VectorViewerBrowserTests.rgb(VectorStyle.labelColor))
            let dot = try #require(VectorViewerBrowserTests.rgb(VectorStyle.color(index: 0)))
            _ = try VectorViewerBrowserTests.renderUntilDrawn(url + fragment, in: work, origin: origin) {
                $0.count(near: ink, tolerance: 60, within: 40, of: dot, anchorTolerance: 40) >= 30
            }
        }
        let (plain, chosen) = ("GET /kr/style.json 200", "GET /kr/style.json?labels=ko 200")
        #expect(waitUntil { loads(chosen) == 1 }, "the test's own request")
        try render("")
        #expect(waitUntil { loads(plain) >= 1 }, "\(opened.stderr.suffix(2000))")
        #expect(loads(chosen) == 1, "the English page loaded the Korean labels")
        try render("#labels=ko")
        #expect(waitUntil { loads(chosen) >= 2 }, "the switch's choice did not load the Korean labels: \(opened.stderr.suffix(2000))")
    }
}

/// A vector region of named points, made with GDAL's `ogr2ogr` (Debian's gdal-bin) and installed
/// from a test origin into a fresh workspace.
struct PointRegion {
    let work: TemporaryDirectory
    let origin: TestOrigin
    let mapgate: MapGateBinary

    /// - Parameters:
    ///   - config: more of the user's configuration (the catalog's URL is set).
    ///   - metadata: rows of the file's `metadata` table to set after ogr2ogr wrote it.
    ///   - sql: run on the file after that.
    init(
        id: String, points: [(properties: [String: String], longitude: Double, latitude: Double)], maxzoom: Int, config: [String: Any] = [:],
        metadata: [String: String] = [:], sql: String? = nil
    ) throws {
        work = try TemporaryDirectory()
        let features: [[String: Any]] = points.map {
            ["type": "Feature", "properties": $0.properties, "geometry": ["type": "Point", "coordinates": [$0.longitude, $0.latitude]]]
        }
        try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": features])
            .write(to: URL(fileURLWithPath: work.file(id + ".geojson")))
        let made = try runProcess(
            "/usr/bin/ogr2ogr", ["-f", "MBTILES", work.file(id + ".mbtiles"), work.file(id + ".geojson"), "-dsco", "MAXZOOM=\(maxzoom)", "-nln", "places"])
        guard made.status == 0 else { throw MissingFixture(path: "a region made by ogr2ogr (Debian package gdal-bin): \(made.stderr)") }
        for (name, value) in metadata {
            let set = try runProcess("/usr/bin/sqlite3", [work.file(id + ".mbtiles"), "DELETE FROM metadata WHERE name = '\(name)'; INSERT INTO metadata VALUES ('\(name)', '\(value)')"])
            guard set.status == 0 else { throw MissingFixture(path: "metadata \(name) set with sqlite3: \(set.stderr)") }
        }
        if let sql {
            let ran = try runProcess("/usr/bin/sqlite3", [work.file(id + ".mbtiles"), sql])
            guard ran.status == 0 else { throw MissingFixture(path: "\(sql) run by sqlite3: \(ran.stderr)") }
        }
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        origin = try TestOrigin(root: work.file("www"))
        let builder = CatalogBuilder(root: work.file("www"))
        try builder.add(id: id, source: work.file(id + ".mbtiles"), format: "pbf", maxzoom: maxzoom)
        try builder.write()
        mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json"].merging(config) { $1 })
        let synced = try mapgate.run(["sync", id])
        guard synced.status == 0 else { throw MissingFixture(path: "region \(id) synced (\(synced.stderr))") }
    }
}
