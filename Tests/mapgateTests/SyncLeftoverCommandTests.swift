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
}
