import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where a package may come from, and which failures are worth a retry.
@Suite struct PackageSourceTests {
    /// A python3 origin on 127.0.0.1 whose every GET sends `head` (header lines, one per element)
    /// and then `body` (Python expressions, evaluated once at start; `sys.argv[1]` is `argument`).
    static func pythonOrigin(head: [String], body: String, argument: String = "") throws -> (server: BackgroundProcess, port: Int) {
        let folder = try TemporaryDirectory()
        let headers = head.map { "        self.send_header(\($0))" }.joined(separator: "\n")
        let script = try folder.write("server.py", """
            import gzip, http.server, sys
            body = \(body)
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
            \(headers)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """)
        let server = try BackgroundProcess("/usr/bin/python3", [script, argument])
        guard let line = server.firstLine(), let port = Int(line) else {
            server.stop()
            throw MissingFixture(path: "an HTTP origin from python3: \(server.stderr)")
        }
        return (server, port)
    }

    /// 1.4.0: an http(s) catalog could name `file:///etc/passwd`, a FIFO (which hung `sync` with
    /// the lock held) or `file:///dev/stdin`.
    @Test(arguments: ["file:///etc/passwd", "file:///dev/stdin"])
    func aRemoteCatalogCannotNameALocalFile(url: String) throws {
        let harness = try SyncHarness()
        try harness.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png", overrides: ["url": url])
        let error = #expect(throws: RegionError.self) { try harness.sync("geo") }
        #expect(error?.reason.contains("local file named by a remote catalog") == true, "\(error?.reason ?? "")")
        #expect(error?.kind == .badData)
    }

    @Test func aFileCatalogsPackageMustBeARegularFile() throws {
        let harness = try SyncHarness()
        let fifo = harness.work.file("www/packages/fifo.mbtiles")
        try harness.builder.add(id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png")
        #expect(mkfifo(fifo, 0o600) == 0)
        try harness.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png",
            overrides: ["url": "file://" + fifo])
        try harness.builder.write()
        let catalog = try Catalog.parse(
            try Data(contentsOf: URL(fileURLWithPath: harness.work.file("www/catalog.json"))), sourceURL: "file://" + harness.work.file("www/catalog.json"))
        let error = #expect(throws: RegionError.self) { try harness.sync("geo", catalog: catalog) }
        #expect(error?.reason.contains("is not a regular file") == true, "\(error?.reason ?? "")")
    }

    /// A package on a stick that is a symbolic link (to a copy elsewhere, or to /etc/shadow) is
    /// refused for what it is (65), not as a download that failed (69, which a script retries).
    @Test func aFileCatalogsPackageThatIsALinkIsRefusedForWhatItIs() throws {
        let harness = try SyncHarness()
        try harness.builder.add(id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png")
        try harness.builder.write()
        let real = harness.work.file("www/packages/geo-1.mbtiles.gz")
        let link = harness.work.file("www/packages/link.mbtiles.gz")
        #expect(symlink(real, link) == 0)
        let path = harness.work.file("www/catalog.json")
        var catalog = try Catalog.parse(try Data(contentsOf: URL(fileURLWithPath: path)), sourceURL: "file://" + path)
        catalog.regions[0].url = "file://" + link
        let error = #expect(throws: RegionError.self) { try harness.sync("geo", catalog: catalog) }
        #expect(error?.kind == .badData)
        #expect(error?.reason.contains("is a symbolic link: refused") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("download failed") == false, "\(error?.reason ?? "")")
    }

    /// A server or proxy that compresses every answer sends a gzip package gzipped once more:
    /// more bytes than the catalog declares, and the refusal says why.
    @Test func aPackageCompressedOnTheWayIsSaidToBe() throws {
        let harness = try SyncHarness()
        try harness.builder.add(id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png")
        try harness.builder.write()
        let (server, port) = try Self.pythonOrigin(
            head: ["'Content-Encoding', 'gzip'"], body: "gzip.compress(open(sys.argv[1], 'rb').read())",
            argument: harness.work.file("www/packages/geo-1.mbtiles.gz"))
        defer { server.stop() }
        let path = harness.work.file("www/catalog.json")
        var catalog = try Catalog.parse(try Data(contentsOf: URL(fileURLWithPath: path)), sourceURL: "http://127.0.0.1:\(port)/catalog.json")
        catalog.regions[0].url = "http://127.0.0.1:\(port)/geo-1.mbtiles.gz"
        let error = #expect(throws: RegionError.self) { try harness.sync("geo", catalog: catalog) }
        #expect(error?.kind == .badData)
        #expect(error?.reason.contains("Content-Encoding: gzip") == true, "\(error?.reason ?? "")")
    }

    /// 1.4.0 retried a missing `file://` path four times (7 s) and called it "unavailable".
    @Test func aMissingLocalPackageFailsAtOnceAsIO() throws {
        let harness = try SyncHarness()
        try harness.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png")
        try harness.builder.write()
        let path = harness.work.file("www/catalog.json")
        var catalog = try Catalog.parse(try Data(contentsOf: URL(fileURLWithPath: path)), sourceURL: "file://" + path)
        catalog.regions[0].url = "file://" + harness.work.file("www/packages/gone.mbtiles.gz")
        // Checked before the download: a missing local file is named at once.
        let error = #expect(throws: RegionError.self) { try harness.sync("geo", catalog: catalog) }
        #expect(error?.kind == .io)
        #expect(error?.reason.contains("after") == false)
    }

    @Test func onlyFailuresARetryCanMendAreTransient() {
        #expect(HTTPError.transport(code: 7, message: "refused", url: "x").isTransient)
        #expect(HTTPError.transport(code: 28, message: "timeout", url: "x").isTransient)
        #expect(!HTTPError.transport(code: 1, message: "unsupported protocol", url: "x").isTransient)
        #expect(!HTTPError.transport(code: 47, message: "too many redirects", url: "x").isTransient)
        #expect(!HTTPError.transport(code: 37, message: "no such file", url: "x").isTransient)
        #expect(!HTTPError.status(404, url: "x").isTransient)
        #expect(HTTPError.status(503, url: "x").isTransient)
    }

    @Test func a404LeavesNoPartialFile() throws {
        let harness = try SyncHarness()
        try harness.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png",
            overrides: ["url": "/_fault/status=404/packages/geo-1.mbtiles.gz"])
        #expect(throws: RegionError.self) { try harness.sync("geo") }
        #expect(harness.leftovers.isEmpty, "\(harness.leftovers)")
    }

    /// A header line over libcurl's 100 KB reads as "Out of memory (curl error 27)": said as what
    /// it most likely is, and the server's fault (69) as for the catalog, not bad data (65).
    @Test func aHeaderLineOverWhatLibcurlHoldsIsTheServersFault() throws {
        let (server, port) = try Self.pythonOrigin(head: ["'X-Big', 'a' * 150000"], body: "b'x' * 100")
        defer { server.stop() }
        let harness = try SyncHarness()
        try harness.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png",
            overrides: ["url": "http://127.0.0.1:\(port)/geo-1.mbtiles.gz"])
        let error = #expect(throws: RegionError.self) { try harness.sync("geo") }
        #expect(error?.kind == .unavailable)
        #expect(error?.reason.contains("header line over 100 KB") == true, "\(String(describing: error))")
    }
}
