import Foundation
import MapGate
import TestSupport
import Testing

/// A region's id names its files (`regions/ID.mbtiles`): a name that is not a region id, from the
/// command line or from a row of the state database changed outside mapgate, is never used as a
/// path (found by an attack: `remove ../../victim` deleted `victim.mbtiles` beside the data
/// directory, with or without such a row).
@Suite struct RegionIDTamperTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
    }

    @Test func aNameThatIsNotARegionIDRemovesNoFile() throws {
        // `regions/../../victim.mbtiles`: beside the data directory.
        let victim = mapgate.dataDirectory + "/../victim.mbtiles"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let asked = try mapgate.run(["remove", "../../victim"])
        #expect(asked.status == 1, "\(asked.stderr)")
        #expect(asked.stderr.contains("not installed"), "\(asked.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim))

        // The same id put in plain's row by hand: the row is damaged (every command says so, with
        // the advice to remove it), and removing it removes the row alone.
        let state = mapgate.dataDirectory + "/state.sqlite"
        #expect(try runProcess("/usr/bin/sqlite3", [state, "UPDATE regions SET id = '../../victim' WHERE id = 'plain'"]).status == 0)
        let list = try mapgate.run(["list"])
        #expect(list.status == 65, "\(list.stderr)")
        #expect(list.stderr.contains("id \"../../victim\" is not a region id") && list.stderr.contains("'mapgate remove' it"), "\(list.stderr)")
        let removed = try mapgate.run(["remove", "../../victim"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim))
        #expect(try mapgate.run(["list"]).status == 0)
        // plain's file was left alone: synced again, it is plain again.
        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        #expect(try mapgate.run(["verify", "plain"]).status == 0)
    }

    /// A damaged row can be removed as its advice says (found with the above: `remove` first asked
    /// for every installed region, to tell a style's name, and the damaged row failed that).
    @Test func aRowChangedOutsideMapgateIsRemovedAsAdvised() throws {
        let state = mapgate.dataDirectory + "/state.sqlite"
        #expect(try runProcess("/usr/bin/sqlite3", [state, "UPDATE regions SET format = 'gif' WHERE id = 'plain'"]).status == 0)
        #expect(try mapgate.run(["list"]).status == 65)
        let removed = try mapgate.run(["remove", "plain"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed plain (its record was damaged)"), "\(removed.stdout)")
        #expect(try mapgate.run(["list"]).status == 0)
    }
}
