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
        let work = try TemporaryDirectory()
        let features = Self.places.map { #"{"type":"Feature","properties":{"name":"\#($0.0)"},"geometry":{"type":"Point","coordinates":[\#($0.1),\#($0.2)]}}"# }
        try work.write("places.geojson", #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#)
        let made = try runProcess(
            "/usr/bin/ogr2ogr", ["-f", "MBTILES", work.file("places.mbtiles"), work.file("places.geojson"), "-dsco", "MAXZOOM=5", "-nln", "places"])
        #expect(made.status == 0, "ogr2ogr (Debian package gdal-bin): \(made.stderr)")
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        let origin = try TestOrigin(root: work.file("www"))
        defer { origin.stop() }
        let builder = CatalogBuilder(root: work.file("www"))
        try builder.add(id: "places", source: work.file("places.mbtiles"), format: "pbf", maxzoom: 5)
        try builder.write()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        var config: [String: Any] = ["catalogURL": origin.baseURL + "/catalog.json"]
        if let maplibrePath { config["maplibrePath"] = maplibrePath }
        try mapgate.configure(config)
        #expect(try mapgate.run(["sync", "places"]).status == 0)
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
