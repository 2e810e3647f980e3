import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Headless Chromium loads the viewer page of a raster region served by `mapgate open`; the
/// screenshot must show the region's tiles, checked by their pixels.
@Suite(.tags(.browser)) struct ViewerBrowserTests {
    /// The colours of the demo region's zoom-1 and zoom-2 tiles (see Fixtures/generate.py), and
    /// their checkerboard shade.
    static let tileColors: [(UInt8, UInt8, UInt8)] = [(40, 180, 99), (34, 153, 84), (241, 196, 15), (204, 166, 12), (46, 134, 193), (39, 113, 164)]

    static let chromium = "/usr/bin/chromium"

    /// An 800×600 screenshot of `url` taken by headless Chromium.
    static func screenshot(_ url: String, in work: TemporaryDirectory, waitMilliseconds: Int) throws -> PNGImage {
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            throw MissingFixture(path: "\(chromium) (Debian package chromium; .ci/run installs it)")
        }
        let shot = work.file("screenshot-\(UUID().uuidString).png")
        let result = try runProcess(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(work.file("profile"))",
                "--window-size=800,600", "--virtual-time-budget=\(waitMilliseconds)", "--screenshot=\(shot)", url,
            ], environment: ["HOME": work.path], timeout: 90)
        guard FileManager.default.fileExists(atPath: shot) else { throw MissingFixture(path: "a screenshot (chromium: \(result.stderr))") }
        return try PNGImage(contentsOf: shot)
    }

    @Test func viewerShowsTheMapTiles() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        let work = try TemporaryDirectory()
        let origin = try TestOrigin(root: TestPaths.fixtures)
        defer { origin.stop() }
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json"])
        #expect(try mapgate.run(["sync", "demo-world"]).status == 0)
        let opened = try mapgate.start(["open", "demo-world"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        let image = try Self.screenshot(url, in: work, waitMilliseconds: 8000)
        #expect(image.width == 800)
        let covered = image.fraction(near: Self.tileColors)
        #expect(covered > 0.4, "only \(Int(covered * 100))% of the screenshot shows tile colours")
    }

    /// Issue 26 item 1: a reload revalidates every tile (`Cache-Control: no-cache`), and each
    /// 304 once carried two `Content-Length` headers, which Chromium refuses
    /// (ERR_RESPONSE_HEADERS_MULTIPLE_CONTENT_LENGTH): the reloaded map was blank. A page of the
    /// test origin frames the viewer and, once it has loaded, loads it again in the same frame.
    @Test func reloadingTheViewerKeepsTheMap() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") else {
            throw MissingFixture(path: "/usr/share/javascript/leaflet/leaflet.js (Debian package libjs-leaflet)")
        }
        let work = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/regions", toPath: work.file("www/regions"))
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/catalog.json", toPath: work.file("www/catalog.json"))
        let origin = try TestOrigin(root: work.file("www"))
        defer { origin.stop() }
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json"])
        #expect(try mapgate.run(["sync", "demo-world"]).status == 0)
        let opened = try mapgate.start(["open", "demo-world", "--verbose"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        try work.write("www/reload.html", """
            <!DOCTYPE html><html><body style="margin:0;overflow:hidden">
            <iframe id="viewer" src="\(url)" style="border:0;width:800px;height:600px"></iframe>
            <script>
            var viewer = document.getElementById("viewer"), loads = 0;
            viewer.onload = function () { loads += 1; if (loads == 1) setTimeout(function () { viewer.src = viewer.src; }, 2000); };
            </script></body></html>
            """)
        let image = try Self.screenshot(origin.baseURL + "/reload.html", in: work, waitMilliseconds: 8000)
        // The reload revalidated the tiles: the server answered 304s (else this test proves nothing).
        #expect(waitUntil { opened.stderr.split(separator: "\n").contains { $0.contains(".png 304") } }, "no 304 in: \(opened.stderr)")
        let covered = image.fraction(near: Self.tileColors)
        #expect(covered > 0.4, "after a reload only \(Int(covered * 100))% of the screenshot shows tile colours")
    }

    @Test func viewerShowsUpdateRequiredOnceTheGateCloses() throws {
        let work = try TemporaryDirectory()
        try work.write("www/lookup.json", #"{"resultCount":1,"results":[{"trackId":1,"version":"9.0","trackViewUrl":"https://apps.example/m"}]}"#)
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/regions", toPath: work.file("www/regions"))
        try FileManager.default.copyItem(atPath: TestPaths.fixtures + "/catalog.json", toPath: work.file("www/catalog.json"))
        let origin = try TestOrigin(root: work.file("www"))
        defer { origin.stop() }
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure(["catalogURL": origin.baseURL + "/catalog.json", "appID": 1, "lookupURL": origin.baseURL + "/lookup.json", "maxPrompts": 2])
        #expect(try mapgate.run(["sync", "demo-world"], at: "2027-01-01 00:00:00").status == 0)
        let opened = try mapgate.start(["open", "demo-world"], at: "2027-02-10 00:00:00", environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        defer {
            opened.signal(SIGTERM)
            _ = opened.wait()
        }
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        // Another mapgate spends the last use; the running server closes within its refresh.
        #expect(try mapgate.run(["tile", "demo-world", "0", "0", "0"], at: "2027-02-10 00:00:05").status == 0)
        #expect(try waitUntil { try HTTPClient().get(HTTPRequest(url: url)).status == 403 })
        let image = try Self.screenshot(url, in: work, waitMilliseconds: 3000)
        #expect(image.fraction(near: Self.tileColors) < 0.01)
        #expect(image.fraction(near: [(253, 236, 234)], tolerance: 4) > 0.02, "the update-required notice is not on screen")
        let page = try HTTPClient().get(HTTPRequest(url: url))
        #expect(page.status == 403)
        #expect(String(decoding: page.body, as: UTF8.self).contains("Install mapgate 9.0"))
    }
}
