import Foundation
import MapGate
import TestSupport
import Testing

/// A writer killed in the middle of a change (SIGKILL, a power cut) leaves a hot journal beside
/// the state database, which only a connection that may write can roll back. The readers that
/// only read (a running server's region watcher, the service's machine server as it starts) open
/// it read-only, and failed with SQLite's 776 (`SQLITE_READONLY_ROLLBACK`) until a writing command
/// came (found by an attack on system mode: a `serve` failed so after a session's command was
/// killed). They roll it back first, when they may write the folder.
@Suite struct HotJournalTests {
    /// Leaves a hot journal beside `path` (``KilledWriter``); a running server's watcher may
    /// undo it at once, so the journal is looked for before the kill.
    static func killWriter(of path: String) throws {
        #expect(try KilledWriter.leaveUnfinishedChange(in: path), "no journal was left to test with")
    }

    @Test func aReaderRollsBackWhatAKilledWriterLeft() throws {
        let harness = try SyncHarness()
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("plain")
        try Self.killWriter(of: harness.directory.statePath)
        #expect(FileManager.default.fileExists(atPath: harness.directory.statePath + "-journal"))
        let library = RegionLibrary(directory: harness.directory, state: try StateDatabase.reading(directory: harness.directory))
        #expect(try library.installed().map(\.id) == ["plain"])
        #expect(!FileManager.default.fileExists(atPath: harness.directory.statePath + "-journal"), "rolled back")
        let tables = try harness.state.database.query("SELECT count(*) FROM sqlite_master WHERE name = 'junk'") { $0.int(0) }
        #expect(tables == [0], "the killed change is gone")
    }

    /// A running server's region watcher keeps its read-only connection between looks: a change
    /// killed meanwhile is undone at its next look, with no failure said and the regions served.
    @Test func aRunningServersWatcherGoesOnAfterAKilledWriter() throws {
        let harness = try SyncHarness()
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("plain")
        let failures = Locked<[String]>([])
        let server = try TileServer(
            library: harness.library, authorization: try harness.authorization(),
            configuration: .init(leafletPath: "/nonexistent", regionRefresh: 0.2),
            makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) },
            onRegionEvent: { event in if case .failed(let reason) = event { failures.withLock { $0.append(reason) } } })
        defer { server.stop() }
        usleep(500_000)  // the watcher has looked, and keeps its connection
        try Self.killWriter(of: harness.directory.statePath)
        #expect(waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: harness.directory.statePath + "-journal") }, "undone")
        usleep(500_000)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(try HTTPClient().get(HTTPRequest(url: server.baseURL + "/plain/0/0/0.png")).status == 200)
    }
}
