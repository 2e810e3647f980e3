import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// A catalog over a poor link (found by an attack on sync over a poor network: a 154 KB catalog
/// at 2 KB/s failed every run at the 60 s its whole transfer was once allowed, exit 69, so a user
/// on such a link could never sync).
@Suite struct CatalogSourceSlowLinkTests {
    /// A python3 origin on 127.0.0.1 that sends `body` at `bytesPerSecond`, in a piece every 0.2 s.
    static func tricklingOrigin(body: Data, bytesPerSecond: Int) throws -> (server: BackgroundProcess, port: Int, folder: TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        try body.write(to: URL(fileURLWithPath: folder.file("body")))
        let script = try folder.write("server.py", """
            import http.server, sys, time
            body = open(sys.argv[1], 'rb').read()
            piece = max(1, \(bytesPerSecond) // 5)
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    for start in range(0, len(body), piece):
                        self.wfile.write(body[start:start + piece])
                        self.wfile.flush()
                        time.sleep(0.2)
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """)
        let server = try BackgroundProcess("/usr/bin/python3", [script, folder.file("body")])
        guard let line = server.firstLine(), let port = Int(line) else {
            server.stop()
            throw MissingFixture(path: "an HTTP origin from python3: \(server.stderr)")
        }
        return (server, port, folder)
    }

    /// A catalog that keeps coming, slowly, for longer than a minute is fetched whole.
    @Test func aCatalogThatTakesMoreThanAMinuteIsFetched() throws {
        var text = #"{"formatVersion": 1, "publisher": "Test", "serial": 7, "regions": []}"#
        text += String(repeating: " ", count: 19_500 - text.utf8.count) + "\n"
        let origin = try Self.tricklingOrigin(body: Data(text.utf8), bytesPerSecond: 300)
        defer { origin.server.stop() }
        let started = Date()
        let source = CatalogSource(url: "http://127.0.0.1:\(origin.port)/catalog.json", trustedKeys: [], requiresSignature: false, client: HTTPClient())
        let fetched = try source.fetch()
        #expect(fetched.catalog.serial == 7)
        #expect(Date().timeIntervalSince(started) > 60, "the trickle was faster than the cap it tests")
    }

    /// A link that drops every few hundred bytes: each try takes up where the last stopped
    /// (`Range`, `If-Range` on the ETag), and a try that brought bytes costs none of the four
    /// (found by an attack: a link that dropped every 60 KB fetched a 154 KB catalog from its
    /// start four times, and failed, exit 69).
    @Test func aCatalogCutOffAgainAndAgainIsTakenUpWhereItStopped() throws {
        let work = try TemporaryDirectory()
        var text = #"{"formatVersion": 1, "publisher": "Test", "serial": 9, "regions": []}"#
        text += String(repeating: " ", count: 1_400 - text.utf8.count) + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: work.file("catalog.json")))
        let origin = try TestOrigin(root: work.path)
        defer { origin.stop() }
        var source = CatalogSource(
            url: origin.baseURL + "/_fault/cut=250,times=6/catalog.json", trustedKeys: [], requiresSignature: false, client: HTTPClient())
        source.retryDelays = [0, 0, 0]
        let fetched = try source.fetch()
        #expect(fetched.catalog.serial == 9)
        let ranges = origin.requests.filter { $0.path.hasSuffix("/catalog.json") }.map { $0.range ?? "whole" }
        #expect(ranges == ["whole", "bytes=250-", "bytes=500-", "bytes=750-", "bytes=1000-", "bytes=1250-"], "\(ranges)")
    }
}
