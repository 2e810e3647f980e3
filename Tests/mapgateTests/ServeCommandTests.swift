import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// `serve` and `open` run as subprocesses: start, answer, log, stop cleanly on a signal.
@Suite struct ServeCommandTests {
    let workspace: CLIWorkspace
    var origin: TestOrigin { workspace.origin }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
    }

    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> BackgroundProcess {
        try mapgate.start(arguments, environment: environment)
    }

    @Test func serveAnswersLogsAndStopsCleanlyOnSIGTERM() throws {
        let server = try start(["serve", "--port", "0", "--verbose"])
        let line = try #require(server.firstLine(), "no output; stderr: \(server.stderr)")
        #expect(line.hasPrefix("serving 1 region at http://127.0.0.1:"))
        let base = String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast())
        let tile = try HTTPClient().get(HTTPRequest(url: base + "/plain/0/0/0.png"))
        #expect(tile.status == 200)
        #expect(tile.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        server.signal(SIGTERM)
        #expect(server.wait() == 0)
        #expect(server.stderr.contains("GET /plain/0/0/0.png 200 \(tile.body.count) "))
    }

    @Test func serveStopsOnSIGINTToo() throws {
        let server = try start(["serve", "--port", "0"])
        #expect(server.firstLine() != nil)
        server.signal(SIGINT)
        #expect(server.wait() == 0)
    }

    @Test func openPrintsTheViewerURLOfAnInstalledRegion() throws {
        let opened = try start(["open", "plain"])
        let url = try #require(opened.firstLine(), "stderr: \(opened.stderr)")
        #expect(url.hasPrefix("http://127.0.0.1:"))
        #expect(url.hasSuffix("/view/plain"))
        let page = try HTTPClient().get(HTTPRequest(url: url))
        #expect(page.status == 200)
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        opened.signal(SIGTERM)
        #expect(opened.wait() == 0)
    }

    @Test func openRefusesARegionThatIsNotInstalled() throws {
        let result = try mapgate.run(["open", "atlantis"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("region atlantis: not installed (installed: plain)"))
    }

    @Test func closedGateRefusesToServe() throws {
        try mapgate.configure(["appID": 1, "lookupURL": origin.baseURL + "/lookup.json", "maxPrompts": 0])
        #expect(try mapgate.run(["check"], at: "2027-01-01 00:00:00").status == 0)
        let serve = try mapgate.run(["serve", "--port", "0"], at: "2027-03-01 00:00:00")
        #expect(serve.status == 77)
        #expect(serve.stderr.contains("install version 1.5.0 from https://apps.example/mapgate"))
        let open = try mapgate.run(["open", "plain"], at: "2027-03-01 00:00:00")
        #expect(open.status == 77)
    }

    @Test func runningServerClosesWhenAnotherProcessSpendsTheLastUse() throws {
        try mapgate.configure(["appID": 1, "lookupURL": origin.baseURL + "/lookup.json", "maxPrompts": 2])
        #expect(try mapgate.run(["check"], at: "2027-01-01 00:00:00").status == 0)
        let server = try mapgate.start(
            ["serve", "--port", "0"], at: "2027-02-15 00:00:00", environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        let line = try #require(server.firstLine(), "stderr: \(server.stderr)")
        #expect(server.stderr.contains("2 uses left"))
        let base = String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast())
        #expect(try HTTPClient().get(HTTPRequest(url: base + "/plain/0/0/0.png")).status == 200)
        #expect(try mapgate.run(["tile", "plain", "0", "0", "0"], at: "2027-02-15 00:00:10").status == 0)  // the last use
        var status = 0
        for _ in 0..<50 {
            status = try HTTPClient().get(HTTPRequest(url: base + "/plain/0/0/0.png")).status
            if status == 403 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(status == 403)
        server.signal(SIGTERM)
        #expect(server.wait() == 0)
        #expect(server.stderr.contains("the gate is closed"))
    }
}
