import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The gate on real uses (`tile`, `sync`), with time moved by faketime.
@Suite struct GateUseTests {
    let workspace: CLIWorkspace
    var origin: TestOrigin { workspace.origin }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0", notes: "Line one\nLine two")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
    }

    func configure(maxPrompts: Int = 5) throws {
        try mapgate.writeConfig([
            "appID": 1, "lookupURL": origin.baseURL + "/lookup.json", "catalogURL": origin.baseURL + "/catalog.json", "maxPrompts": maxPrompts,
        ])
    }

    @Test func usesCountDownThenTheGateRefuses() throws {
        try configure()
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        let grace = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-01-20 00:00:00")
        #expect(grace.status == 0)
        #expect(grace.stderr.contains("mapgate 1.5.0 is available; please update (prompts start 2027-01-31)"))
        for left in stride(from: 5, through: 1, by: -1) {
            let use = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-01 0\(6 - left):00:00")
            #expect(use.status == 0)
            #expect(use.stdoutData.starts(with: [0x89, 0x50, 0x4E, 0x47]))  // the command ran: a PNG
            #expect(use.stderr.contains("mapgate 1.5.0 is available (you have \(BuildInfo.version))."))
            #expect(use.stderr.contains("  Line one"))
            #expect(use.stderr.contains("Update: https://apps.example/mapgate"))
            #expect(use.stderr.contains("\(left) \(left == 1 ? "use" : "uses") left"), "\(use.stderr)")
        }
        let refused = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-01 08:00:00")
        #expect(refused.status == 77)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("update required"))
        #expect(refused.stderr.contains("install version 1.5.0 from https://apps.example/mapgate"))
        let syncRefused = try mapgate.run(["sync", "geo"], at: "2027-02-02 08:00:00")
        #expect(syncRefused.status == 77)
        // Offline and with the clock set back it stays closed.
        try mapgate.writeConfig(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": origin.baseURL + "/catalog.json"])
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-03-05 08:00:00").status == 77)
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2026-12-01 08:00:00").status == 77)
    }

    @Test func closedGateRefusesSyncBeforeAnyDownload() throws {
        try configure(maxPrompts: 0)
        #expect(try mapgate.run(["check"], at: "2027-01-01 00:00:00").status == 0)
        origin.clearRequests()
        let result = try mapgate.run(["sync", "geo", "--json"], at: "2027-03-01 00:00:00")
        #expect(result.status == 77)
        #expect(origin.requests.allSatisfy { !$0.path.contains("catalog") && !$0.path.contains("packages") })
        #expect(!FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/regions/geo.mbtiles"))
    }

    @Test func quietStillShowsThePromptSinceItCountsAUse() throws {
        try configure()
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        let use = try mapgate.run(["tile", "geo", "0", "0", "0", "--quiet"], at: "2027-02-05 00:00:00")
        #expect(use.status == 0)
        #expect(use.stderr.contains("5 uses left"))
    }

    @Test func twoProcessesCountingAtOnceNeverLoseAUse() throws {
        try configure(maxPrompts: 100)
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        let runs = 8
        let mapgate = self.mapgate
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<runs { _ = try? mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-05 00:00:00") }
        }
        let status = try mapgate.run(["status", "--json"], at: "2027-02-05 00:00:00")
        #expect(try MapGateBinary.json(status.stdout)["promptsShown"] as? Int == 2 * runs)
    }

    @Test func updatedAppOpensTheGateEvenOffline() throws {
        // The saved pending version is no newer than this build: as after an update.
        try configure(maxPrompts: 0)
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-03-01 00:00:00").status == 77)
        let state = mapgate.dataDirectory + "/state.sqlite"
        #expect(try runProcess("/usr/bin/sqlite3", [state, "UPDATE gate SET pending_version = '\(BuildInfo.version)'"]).status == 0)
        try mapgate.writeConfig(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": origin.baseURL + "/catalog.json", "maxPrompts": 0])
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-03-02 00:00:00").status == 0)
        let status = try MapGateBinary.json(try mapgate.run(["status", "--json"], at: "2027-03-02 00:00:00").stdout)
        #expect(status["state"] as? String == "up-to-date")
    }
}
