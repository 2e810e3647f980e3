import Foundation
import MapGate
import TestSupport
import Testing

/// One failure to prepare the tile query is reported with its reason and tried again on the next
/// tile, never cached for the life of the connection (issue 28, item 3).
@Suite struct MBTilesFileRetryTests {
    @Test func aTileQueryThatFailedOnceWorksOnceTheFileIsBack() throws {
        let work = try TemporaryDirectory()
        let path = work.file("r.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: path)
        let file = try MBTilesFile(path: path)
        // Another process drops the tiles view (the query cannot be prepared), then makes it again.
        let writer = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        let view = try #require(try writer.query("SELECT sql FROM sqlite_master WHERE name = 'tiles'") { $0.text(0) }.first ?? nil)
        try writer.execute("DROP VIEW tiles")
        let error = #expect(throws: MBTilesError.self) { try file.storedTile(z: 0, x: 0, y: 0) }
        #expect(error?.reason.contains("no such table: tiles") == true, "\(String(describing: error))")
        try writer.execute(view)
        guard case .data(let tile) = try file.storedTile(z: 0, x: 0, y: 0) else {
            Issue.record("the tile query stayed broken after the table came back")
            return
        }
        #expect(!tile.isEmpty)
    }
}
