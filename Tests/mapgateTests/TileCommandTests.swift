import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `mapgate tile … -o`: never replaces a device, a FIFO or a symlink, and a mistake costs no use.
@Suite struct TileCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    var work: TemporaryDirectory { workspace.work }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
    }

    func promptsShown() throws -> Int? {
        let status = try mapgate.run(["status", "--json"], at: "2027-03-01 00:00:00")
        return try MapGateBinary.json(status.stdout)["promptsShown"] as? Int
    }

    /// The `/dev/null` that `tile -o` once replaced with a regular file, as a node in the temporary folder.
    @Test(.tags(.root), .enabled(if: geteuid() == 0, "mknod needs root (CI runs as root)"))
    func characterDeviceStaysADevice() throws {
        let node = work.file("null")
        #expect(mknod(node, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0)
        let result = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", node])
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(lstat(node, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFCHR)
    }

    @Test func devStdoutIntoAPipeIsWrittenThrough() throws {
        let result = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", "/dev/stdout"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutData.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func symlinkIsFollowed() throws {
        let target = try work.write("real.png", "old")
        try FileManager.default.createSymbolicLink(atPath: work.file("link.png"), withDestinationPath: target)
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0", "-o", work.file("link.png")]).status == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.file("link.png")) == target)
        #expect(FileManager.default.contents(atPath: target)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
    }

    @Test func directoryIsAClearErrorAndCostsNoUse() throws {
        let result = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", work.path], at: "2027-03-01 00:00:00")
        #expect(result.status == 64)
        #expect(result.stderr.contains("cannot write to \(work.path): it is a directory"), "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"))
        #expect(!result.stderr.contains("uses left"))
        #expect(try promptsShown() == 0)
    }

    /// Coordinates off the grid say the rule they break (found by a review: `tile geo 1 5 5` did not
    /// say that X and Y run to 1 at zoom 1), cost no use, and a zoom past 30 says the zooms.
    @Test(arguments: [
        (["1", "5", "5"], "tile coordinates 1/5/5 are not valid XYZ coordinates: at zoom 1, X and Y are whole numbers from 0 to 1"),
        (["31", "0", "0"], "tile coordinates 31/0/0 are not valid XYZ coordinates: the zoom is a whole number from 0 to 30"),
        (["z", "0", "0"], "tile coordinates z/0/0 are not valid XYZ coordinates: the zoom is a whole number from 0 to 30"),
        (["3", "-1", "0"], "at zoom 3, X and Y are whole numbers from 0 to 7"),
    ])
    func coordinatesOffTheGridSayTheRule(_ coordinates: [String], _ said: String) throws {
        let result = try mapgate.run(["tile", "geo"] + coordinates, at: "2027-03-01 00:00:00")
        #expect(result.status == 64 && result.stderr.contains(said), "\(result.stderr)")
        #expect(try promptsShown() == 0)
    }

    /// Bad input, round two, item 7: a NULL `tile_data` was written as 0 bytes with exit 0. `sync`
    /// refuses such a package, so a NULL can only come from editing the installed file, which is
    /// then refused as damaged (issue 35: a file changed by hand is not the one installed).
    @Test func aNullTileIsAnErrorNamingTheRegionAndTheTile() throws {
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let update = try runProcess("/usr/bin/sqlite3", [
            path, "UPDATE images SET tile_data = NULL WHERE tile_id = (SELECT tile_id FROM map WHERE zoom_level = 1 AND tile_column = 0 AND tile_row = 0);",
        ])
        try #require(update.status == 0, "\(update.stderr)")
        let output = work.file("null-tile.png")
        let result = try mapgate.run(["tile", "geo", "1", "0", "1", "-o", output])
        #expect(result.status != 0)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("region geo: is damaged"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        let stdout = try mapgate.run(["tile", "geo", "1", "0", "1"])
        #expect(stdout.status != 0)
        #expect(stdout.stdoutData.isEmpty)
    }
}
