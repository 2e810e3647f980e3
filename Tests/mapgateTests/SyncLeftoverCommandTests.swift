import Foundation
import MapGate
import TestSupport
import Testing

/// `sync` killed (SIGKILL) just after installing a GDAL-style (WAL mode) region: the next run
/// finds it up to date and removes what the dead run left; nothing has side files.
@Suite struct SyncLeftoverCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: mapgate.dataDirectory + "/" + folder)) ?? []).sorted()
    }

    @Test func killedRightAfterInstallingThenSyncedAgain() throws {
        let source = workspace.work.file("gdal.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: source)
        #expect(try runProcess("/usr/bin/sqlite3", [source, "PRAGMA journal_mode=WAL;"]).stdout.contains("wal"))
        try workspace.builder.add(id: "gdal", source: source, format: "png")
        try workspace.builder.write()

        let killed = try mapgate.run(["sync", "gdal"], environment: ["MAPGATE_FAULT_KILL_AT": "installed"])
        #expect(killed.status != 0)
        #expect(files("partial").contains { $0.hasSuffix(".part") }, "\(files("partial"))")
        #expect(files("regions") == ["gdal.mbtiles"], "\(files("regions"))")

        let again = try mapgate.run(["sync", "gdal"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("gdal 1: up to date"), "\(again.stdout)")
        #expect(files("partial").isEmpty, "\(files("partial"))")
        #expect(try mapgate.run(["tile", "gdal", "0", "0", "0", "-o", workspace.work.file("t.png")]).status == 0)
        #expect(try mapgate.run(["verify", "gdal"]).status == 0)
        #expect(files("regions") == ["gdal.mbtiles"], "\(files("regions"))")

        #expect(try mapgate.run(["remove", "gdal"]).status == 0)
        #expect(files("regions").isEmpty && files("partial").isEmpty)
    }

    /// Issue 40 item 4: killed between the rename that put version 2 in place and its record,
    /// the file is version 2 under version 1's record. Readers take it for what it is (not
    /// "damaged"), the server and `list` say 2, and the next `sync` saves the record without
    /// downloading anything. Before the pending record, `verify` said damaged (65).
    @Test(arguments: [true, false])
    func killedBetweenTheRenameAndTheRecord(firstInstall: Bool) throws {
        let plain = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        if !firstInstall {
            try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png", version: "1")
            #expect(try mapgate.run(["sync", "plain"]).status == 0)
        }
        let second = workspace.work.file("plain-2.mbtiles")
        try FileManager.default.copyItem(atPath: plain, toPath: second)
        #expect(try runProcess("/usr/bin/sqlite3", [second, "UPDATE metadata SET value = 'v2' WHERE name = 'description'; INSERT INTO metadata VALUES ('v2', 'yes')"]).status == 0)
        try workspace.builder.add(id: "plain", source: second, version: "2", format: "png")
        try workspace.builder.write()

        let killed = try mapgate.run(["sync", "plain"], environment: ["MAPGATE_FAULT_KILL_AT": "recording"])
        #expect(killed.status != 0)
        #expect(files("regions").contains(".plain.pending.json"), "\(files("regions"))")
        let verify = try mapgate.run(["verify", "plain"])
        #expect(verify.status == 0 && verify.stdout.contains("plain 2: ok"), "\(verify.stdout) \(verify.stderr)")
        let list = try mapgate.run(["list", "--json"])
        #expect(list.stdout.contains(#""version":"2""#), "\(list.stdout)")

        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync", "plain"])
        #expect(again.status == 0 && again.stdout.contains("plain 2: up to date"), "\(again.stdout) \(again.stderr)")
        #expect(workspace.origin.requests.filter { $0.path.contains("packages/") }.isEmpty, "nothing downloaded again")
        #expect(!files("regions").contains(".plain.pending.json"), "\(files("regions"))")
        #expect(try mapgate.run(["verify", "plain"]).status == 0)
    }
}
