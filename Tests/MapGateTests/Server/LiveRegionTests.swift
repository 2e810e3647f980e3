import Foundation
import MapGate
import MapGateDemo
import Synchronization
import TestSupport
import Testing

/// Regions installed, updated (by rename, as sync does) or removed while the server runs are
/// served, or 404, within a second, with no failed request during the swap.
@Suite(.serialized) struct LiveRegionTests {
    let harness: SyncHarness
    let server: TileServer

    init() throws {
        harness = try SyncHarness()
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("plain")
        let harness = harness
        server = try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(leafletPath: "/nonexistent",
            regionRefresh: 0.2), makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
    }

    func status(_ path: String) throws -> HTTPResponse {
        try HTTPClient().get(HTTPRequest(url: server.baseURL + path))
    }

    @Test func installedUpdatedAndRemovedRegionsFollowWithoutFailures() throws {
        defer { server.stop() }
        #expect(try status("/cities.json").status == 404)
        // Load on the region being replaced, for the whole test.
        let failures = Locked<[String]>([])
        let served = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let base = server.baseURL
        let load = Thread {
            let client = HTTPClient()
            while !stop.load(ordering: .relaxed), served.load(ordering: .relaxed) < 20_000 {
                do {
                    let response = try client.get(HTTPRequest(url: base + "/plain/1/0/0.png"))
                    if response.status != 200 { failures.withLock { $0.append("status \(response.status)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                served.add(1, ordering: .relaxed)
            }
        }
        load.start()
        defer { stop.store(true, ordering: .relaxed) }

        try harness.builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf")
        try harness.sync("cities")
        #expect(try waitUntil(timeout: 1.5) { try status("/cities.json").status == 200 })

        let before = try #require(try status("/plain/1/0/0.png").header("ETag"))
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "2", format: "png", gzip: false)
        try harness.sync("plain")
        #expect(try waitUntil(timeout: 1.5) {
            (try JSONSerialization.jsonObject(with: status("/plain.json").body) as? [String: Any])?["version"] as? String == "2.0.0"
        })
        let after = try status("/plain/1/0/0.png")
        #expect(after.status == 200)
        // The same bytes in the new version: the same validator (issue 38), so clients revalidate.
        #expect(after.header("ETag") == before && before.hasPrefix("\""))

        let lock = try DirectoryLock(directory: harness.directory)
        _ = try harness.library.remove("cities", lock: lock)
        #expect(try waitUntil(timeout: 1.5) { try status("/cities/0/0/0.pbf").status == 404 })

        stop.store(true, ordering: .relaxed)
        #expect(waitUntil { load.isFinished })
        #expect(served.load(ordering: .relaxed) > 10)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    }

    /// This process's descriptors open on a deleted file of `region` (removed, or renamed over).
    func heldDeletedFiles(of region: String) -> [String] {
        let path = harness.directory.regionPath(region)
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(path) && $0.hasSuffix("(deleted)") }
    }

    /// A removed region's file, and an updated region's old one, are closed by the server's
    /// workers, so that `remove` gives the disk space back while `serve` runs. (A worker kept it
    /// open until it next answered a request for that region: for ever, for a removed one.)
    @Test func removedAndReplacedFilesAreNotHeldOpen() throws {
        defer { server.stop() }
        try harness.builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf")
        try harness.sync("cities")
        #expect(try waitUntil(timeout: 1.5) { try status("/cities/0/0/0.pbf").status == 200 })
        #expect(try status("/plain/1/0/0.png").status == 200)

        do {
            let lock = try DirectoryLock(directory: harness.directory)
            _ = try harness.library.remove("cities", lock: lock)
        }
        #expect(try waitUntil(timeout: 1.5) { try status("/cities/0/0/0.pbf").status == 404 })
        #expect(waitUntil(timeout: 2) { heldDeletedFiles(of: "cities").isEmpty }, "\(heldDeletedFiles(of: "cities"))")

        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "2", format: "png", gzip: false)
        try harness.sync("plain")
        #expect(try waitUntil(timeout: 1.5) {
            (try JSONSerialization.jsonObject(with: status("/plain.json").body) as? [String: Any])?["version"] as? String == "2.0.0"
        })
        #expect(waitUntil(timeout: 2) { heldDeletedFiles(of: "plain").isEmpty }, "\(heldDeletedFiles(of: "plain"))")
    }
}
