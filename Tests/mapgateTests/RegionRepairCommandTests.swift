import Foundation
import MapGate
import TestSupport
import Testing

/// `list` marks a damaged region and `sync` repairs it, run as subprocesses.
@Suite struct RegionRepairCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    @Test func listMarksADamagedRegionAndSyncRepairsIt() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 8192)
        try handle.close()

        let list = try mapgate.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("1 (damaged)"), "\(list.stdout)")
        #expect(list.stderr.contains("region geo: damaged: its size is 8192 bytes"), "\(list.stderr)")
        // `list` and `verify` give the same advice (issue 27).
        let advice = "'mapgate sync geo' installs it again"
        #expect(list.stderr.contains(advice), "\(list.stderr)")
        let verify = try mapgate.run(["verify", "geo"])
        #expect(verify.status == 65)
        #expect(verify.stderr.contains(advice), "\(verify.stderr)")
        let json = try MapGateBinary.json(try mapgate.run(["list", "--json"]).stdout)
        #expect((json["damaged"] as? String)?.contains("its size is 8192 bytes") == true)

        let sync = try mapgate.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("geo 1: repaired (installed again"), "\(sync.stdout)")
        #expect(sync.stderr.contains("the installed file is damaged"), "\(sync.stderr)")
        let after = try mapgate.run(["list", "--json"])
        #expect(try MapGateBinary.json(after.stdout)["damaged"] is NSNull)
        #expect(!after.stderr.contains("damaged"))
    }
}
