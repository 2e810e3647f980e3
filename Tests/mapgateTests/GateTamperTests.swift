import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The gate against the person at the keyboard, with the real binary: each way that opened or
/// loosened the gate in 1.4.0, and each mistake that cost one of the five uses. The binary runs as
/// `nobody` (with `setpriv`; the tests run as root on CI), as the person at the keyboard would.
@Suite struct GateTamperTests {
    static let user: uid_t? = geteuid() == 0 ? 65534 : nil

    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    var work: TemporaryDirectory { workspace.work }

    init() throws {
        workspace = try CLIWorkspace(user: Self.user)
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        if let user = Self.user {
            // The runs really are the unprivileged user's: what they wrote is theirs.
            var info = stat()
            #expect(stat(mapgate.dataDirectory + "/state.sqlite", &info) == 0)
            #expect(info.st_uid == user)
        }
    }

    func promptsShown(at time: String = "2027-03-01 00:00:00") throws -> Int? {
        let status = try mapgate.run(["status", "--json"], at: time)
        return try MapGateBinary.json(status.stdout)["promptsShown"] as? Int
    }

    func closeTheGate() throws {
        for hour in 1...2 { #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 0\(hour):00:00").status == 0) }
        let third = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 03:00:00")
        #expect(third.status == 77, "\(third.status): \(third.stderr)")
    }

    @Test func gateKeysInTheUserConfigAreRefused() throws {
        try mapgate.writeConfig(["catalogURL": workspace.catalogURL, "maxPrompts": 1000])
        let result = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 00:00:00")
        #expect(result.status == 64)
        #expect(result.stderr.contains("key \"maxPrompts\": belongs to the managed policy"), "\(result.stderr)")
        // The policy in use is named, not a default path that is not there (round two).
        #expect(result.stderr.contains("belongs to the managed policy (\(mapgate.policyPath))"), "\(result.stderr)")
    }

    /// 1.4.0: a new `--data-dir` (or `XDG_DATA_HOME`, `HOME`) and one sync gave a fresh grace and
    /// five fresh uses. The gate's record is the user's now, not the data directory's.
    @Test func aNewDataDirectoryStartsNoNewGate() throws {
        try closeTheGate()
        let other = (mapgate.userFolder ?? work.path) + "/other-data"
        let (program, arguments) = mapgate.command(
            ["/usr/bin/faketime", "2027-02-11 00:00:00", mapgate.path, "sync", "geo", "--config", mapgate.configPath, "--data-dir", other])
        let sync = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(sync.status == 77, "\(sync.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other + "/regions/geo.mbtiles"))
    }

    /// 1.4.0: copy `state.sqlite` while open, copy it back once closed: open again.
    @Test func copyingTheStateBackDoesNotReopenIt() throws {
        let state = mapgate.dataDirectory + "/state.sqlite"
        #expect(try runProcess("/usr/bin/sqlite3", [state, "PRAGMA wal_checkpoint(TRUNCATE)"]).status == 0)
        try FileManager.default.copyItem(atPath: state, toPath: work.file("saved.sqlite"))
        try closeTheGate()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state + suffix) }
        try FileManager.default.copyItem(atPath: work.file("saved.sqlite"), toPath: state)
        try mapgate.handBack()
        let result = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-11 00:00:00")
        #expect(result.status == 77)
    }

    @Test func deletingTheStateDoesNotReopenIt() throws {
        try closeTheGate()
        for folder in [mapgate.dataDirectory, mapgate.stateHome + "/mapgate"] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder + "/state.sqlite" + suffix) }
        }
        // The region file is still there: the lost state fails closed (no release date in this
        // answer, so no uses left), and syncing it again is refused.
        let result = try mapgate.run(["sync", "geo"], at: "2027-02-11 00:00:00")
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("needs one successful store lookup"), "\(result.stderr)")
    }

    /// Five typos closed the gate in 1.4.0.
    @Test func mistakesCostNoUse() throws {
        let at = "2027-03-01 00:00:00"
        #expect(try mapgate.run(["open", "nope"], at: at).status == 1)
        #expect(try mapgate.run(["tile", "nope", "0", "0", "0"], at: at).status == 1)
        #expect(try mapgate.run(["tile", "geo", "0", "9", "0"], at: at).status == 64)
        #expect(try mapgate.run(["sync", "nope"], at: at).status == 1)
        let busy = try HTTPListener(host: "127.0.0.1", port: 0)
        for command in [["serve"], ["open", "geo"]] {
            let result = try mapgate.run(command + ["--port", String(busy.port)], at: at)
            #expect(result.status == 69, "\(command): \(result.status) \(result.stderr)")
        }
        #expect(try mapgate.run(["serve"], at: at, environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0"]).status == 64)
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": "http://127.0.0.1:1/catalog.json", "maxPrompts": 2])
        #expect(try mapgate.run(["sync", "geo"], at: at).status == 69)
        #expect(try promptsShown() == 0)
    }

    @Test func syncWithNothingInstalledCostsNoUse() throws {
        #expect(try mapgate.run(["remove", "geo"]).status == 0)
        let result = try mapgate.run(["sync"], at: "2027-03-01 00:00:00")
        #expect(result.status == 0)
        #expect(result.stdout.contains("No region is installed yet"))
        #expect(try promptsShown() == 0)
    }

    @Test func refreshOverrideOutOfRangeIsAnError() throws {
        for value in ["0", "-1", "61", "soon"] {
            let result = try mapgate.run(["serve", "--port", "0"], environment: ["MAPGATE_GATE_REFRESH_SECONDS": value])
            #expect(result.status == 64, "\(value)")
            #expect(result.stderr.contains("from 0.05 to 60"))
        }
    }

    /// The policy file must be root's alone; run as an unprivileged user, as the threat is one.
    @Test(.enabled(if: geteuid() == 0, "switching to nobody needs root (CI runs as root)"))
    func anUnprivilegedUsersOwnPolicyIsRefused() throws {
        let home = work.file("nobody")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data(#"{"appID": 1, "lookupURL": "http://127.0.0.1:1/l", "maxPrompts": 100}"#.utf8).write(to: URL(fileURLWithPath: home + "/policy.json"))
        #expect(chown(home, 65534, 65534) == 0)
        #expect(chown(home + "/policy.json", 65534, 65534) == 0)
        func asNobody(_ arguments: [String], policy: String) throws -> ProcessResult {
            try runProcess(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", mapgate.path] + arguments + ["--data-dir", home + "/data"],
                environment: ["HOME": home, "XDG_STATE_HOME": home + "/state", "MAPGATE_POLICY": policy, "NO_COLOR": "1"])
        }
        let refused = try asNobody(["status"], policy: home + "/policy.json")
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("is owned by uid 65534, not root"), "\(refused.stderr)")
        // Root's policy, which the user can read but not change, is honoured.
        #expect(chmod(mapgate.policyPath, 0o644) == 0)
        let honoured = try asNobody(["status"], policy: mapgate.policyPath)
        #expect(honoured.status == 0, "\(honoured.stderr)")
    }

    /// 1.4.0: `demo --fixtures DIR` installed and served any region, behind a gate of its own.
    @Test func theDemoServesOnlyItsOwnRegion() throws {
        let fixtures = work.file("fixtures")
        try FileManager.default.copyItem(atPath: TestPaths.fixtures, toPath: fixtures)
        let catalog = try String(contentsOfFile: fixtures + "/catalog.json", encoding: .utf8)
        try catalog.replacingOccurrences(of: "94e7dfc754be76d2eda159f58e67b6f99131f968cac5e90690f330ddb026d6c2", with: String(repeating: "ab", count: 32))
            .write(toFile: fixtures + "/catalog.json", atomically: true, encoding: .utf8)
        let unsigned = try mapgate.runBare(["demo", "--fixtures", fixtures])
        #expect(unsigned.status == 65)
        #expect(unsigned.stderr.contains("the file changed after signing"), "\(unsigned.stderr)")
        // Signed again with the demo key (which ships in the repository): still not the bundled region.
        let signed = try runProcess("/usr/bin/minisign", ["-S", "-s", TestPaths.fixtures + "/keys/demo.key", "-m", fixtures + "/catalog.json"])
        #expect(signed.status == 0, "\(signed.stderr)")
        let result = try mapgate.runBare(["demo", "--fixtures", fixtures])
        #expect(result.status == 65)
        #expect(result.stderr.contains("not the bundled demo region"), "\(result.stderr)")
        #expect(!result.stdout.contains("viewer:"))
    }
}
