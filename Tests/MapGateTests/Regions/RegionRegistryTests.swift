import Foundation
import MapGate
import TestSupport
import Testing

/// Rows of the regions table that mapgate did not write are errors naming them (issue 28, item 3),
/// never read as a PNG region with an empty name; the damaged row can still be removed.
@Suite struct RegionRegistryTests {
    let harness: SyncHarness

    init() throws {
        harness = try SyncHarness()
        try harness.builder.add(id: "r", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("r")
    }

    @Test(arguments: [
        ("UPDATE regions SET format = 'gif'", "format \"gif\" is not one of png, jpg, webp, pbf"),
        ("UPDATE regions SET version = ''", "no name or version"),
    ])
    func aRowChangedOutsideMapgateIsAnErrorNamingIt(sql: String, reason: String) throws {
        try harness.state.database.execute(sql)
        let error = #expect(throws: RegionError.self) { try harness.library.installed() }
        #expect(error?.region == "r")
        #expect(error?.localizedDescription.contains(reason) == true, "\(error?.localizedDescription ?? "")")
        #expect(error?.localizedDescription.contains("was changed outside mapgate") == true)
        // It can still be removed.
        #expect(try harness.library.remove("r", lock: try DirectoryLock(directory: harness.directory)) == .region(nil))
        #expect(try harness.library.installed().isEmpty)
    }
}
