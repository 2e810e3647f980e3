import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a new user tripped over (issue 27), through the built binary.
@Suite struct NewUserTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
    }

    /// Installs the `plain` region and serves it, with `configuration` added to the user's.
    func serveAPlainRegion(configuration: [String: Any] = [:]) throws -> (BackgroundProcess, String) {
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL].merging(configuration) { $1 })
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        let started = try mapgate.serve()
        return (started.process, started.base)
    }

    func stop(_ server: BackgroundProcess) {
        server.signal(SIGTERM)
        _ = server.wait()
    }

    /// A network error names the URL once (curl's message, then the URL again, read badly).
    @Test func anUnreachableCatalogIsNamedOnce() throws {
        let url = "http://127.0.0.1:1/catalog.json"
        try mapgate.configure(["catalogURL": url])
        let result = try mapgate.run(["catalog"])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: url).count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("curl error 7"), "\(result.stderr)")
    }

    @Test func helpForATopicThatIsNotThereIsAUsageError() throws {
        let result = try mapgate.runBare(["help", "nosuch"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no help topic 'nosuch'"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try mapgate.runBare(["help", "sync"]).status == 0)
    }

    /// `open --browser` where no browser can be started (xdg-open exits 3): say so, with the URL.
    @Test func openSaysWhenTheBrowserCannotBeStarted() throws {
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        let bin = workspace.work.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let fake = bin + "/xdg-open"
        try Data("#!/bin/sh\nexit 3\n".utf8).write(to: URL(fileURLWithPath: fake))
        #expect(chmod(fake, 0o755) == 0)
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let open = try mapgate.start(["open", "plain", "--browser"], environment: ["PATH": path])
        defer {
            open.signal(SIGTERM)
            _ = open.wait()
        }
        let url = try #require(open.firstLine(), "\(open.stderr)")
        let deadline = Date().addingTimeInterval(20)
        while !open.stderr.contains("xdg-open could not start a browser"), Date() < deadline { usleep(50_000) }
        #expect(open.stderr.contains("xdg-open could not start a browser (exit 3); open \(url) in a browser yourself"), "\(open.stderr)")
    }

    /// Issue 27 item 1: MapLibre's usual default stack, not installed here, is answered (200) with
    /// the fallback fonts, which a header names; it was 404 for every range and blanked the map.
    @Test func aStyleWhoseFontsAreNotInstalledStillGetsItsGlyphs() throws {
        let (server, base) = try serveAPlainRegion()
        defer { stop(server) }
        let glyphs = try HTTPClient().get(HTTPRequest(url: base + "/fonts/Open%20Sans%20Regular,Arial%20Unicode%20MS%20Regular/0-255.pbf"))
        #expect(glyphs.status == 200)
        #expect(glyphs.header("X-Mapgate-Fonts") == nil)  // none of the stack's fonts is installed
        #expect(glyphs.header("X-Mapgate-Font-Fallback")?.hasPrefix("DejaVu%20Sans%20Book") == true, "\(String(describing: glyphs.header("X-Mapgate-Font-Fallback")))")
        #expect(!glyphs.body.isEmpty)
    }

    /// Issue 27 item 4: SIGHUP killed `serve` (exit 129). It reloads the configuration now, and a
    /// configuration that does not load leaves the server as it was.
    @Test func sighupReloadsTheConfigurationWithoutStopping() throws {
        let (server, base) = try serveAPlainRegion(configuration: ["leafletPath": "/nonexistent"])
        defer { stop(server) }
        let client = HTTPClient()
        #expect(try client.get(HTTPRequest(url: base + "/_leaflet/leaflet.js")).status == 404)
        try mapgate.writeConfig(["catalogURL": workspace.catalogURL, "leafletPath": "/usr/share/javascript/leaflet"])
        server.signal(SIGHUP)
        var deadline = Date().addingTimeInterval(10)
        while !server.stderr.contains("reloaded"), Date() < deadline { usleep(50_000) }
        #expect(try client.get(HTTPRequest(url: base + "/_leaflet/leaflet.js")).status == 200, "\(server.stderr)")
        // A broken configuration is said; the server goes on as it was.
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: mapgate.configPath))
        server.signal(SIGHUP)
        deadline = Date().addingTimeInterval(10)
        while !server.stderr.contains("reload: "), Date() < deadline { usleep(50_000) }
        #expect(server.stderr.contains("still serving with the configuration as it was"), "\(server.stderr)")
        #expect(try client.get(HTTPRequest(url: base + "/plain/0/0/0.png")).status == 200)
        #expect(try client.get(HTTPRequest(url: base + "/_leaflet/leaflet.js")).status == 200)
    }
}
