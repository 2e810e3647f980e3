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
}
