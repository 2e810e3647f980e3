import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The tile answers a server keeps: bounded, oldest out first, never answered for another file,
/// and, served, the same bytes and headers as an answer read from the file (304 included), with
/// an updated region's new tiles served at once.
@Suite(.serialized) struct TileResponseCacheTests {
    static func prepared(_ size: Int) -> HTTPPreparedResponse {
        HTTPPreparedResponse(status: 200, headers: [("Content-Type", "image/png")], body: HTTPBodyBytes(Data(repeating: 7, count: size)))
    }

    static func key(_ x: Int) -> TileResponseCache.Key {
        TileResponseCache.Key(region: "r", z: 5, x: x, y: 1, isGzip: false)
    }

    @Test func keepsWithinItsLimitDroppingTheOldestFirst() throws {
        let work = try TemporaryDirectory()
        FileManager.default.createFile(atPath: work.path + "/a", contents: Data("a".utf8))
        let file = try #require(FileIdentity(path: work.path + "/a"))
        let cache = TileResponseCache(limit: 20_000)
        for x in 0..<10 { cache.insert(Self.key(x), file: file, etag: "\"e\(x)\"", response: Self.prepared(4_000)) }
        #expect(cache.bytes <= cache.limit)
        #expect(cache.count >= 3 && cache.count < 10, "\(cache.count) entries")
        #expect(cache.entry(Self.key(0), file: file) == nil, "the oldest went first")
        let newest = try #require(cache.entry(Self.key(9), file: file))
        #expect(newest.etag == "\"e9\"" && newest.response.body.count == 4_000)
        // Replacing an entry does not count it twice.
        let before = cache.bytes
        cache.insert(Self.key(9), file: file, etag: "\"e9\"", response: Self.prepared(4_000))
        #expect(cache.bytes == before)
        // Tiles over the largest kept size are not kept; a limit of 0 keeps nothing.
        cache.insert(Self.key(20), file: file, etag: "\"big\"", response: Self.prepared(TileResponseCache.maximumTileSize + 1))
        #expect(cache.entry(Self.key(20), file: file) == nil)
        let none = TileResponseCache(limit: 0)
        none.insert(Self.key(1), file: file, etag: "\"e\"", response: Self.prepared(10))
        #expect(none.count == 0 && none.entry(Self.key(1), file: file) == nil)
        cache.removeAll()
        #expect(cache.count == 0 && cache.bytes == 0)
    }

    @Test func anEntryIsNotAnsweredForAnotherFile() throws {
        let work = try TemporaryDirectory()
        FileManager.default.createFile(atPath: work.path + "/a", contents: Data("a".utf8))
        FileManager.default.createFile(atPath: work.path + "/b", contents: Data("b".utf8))
        let a = try #require(FileIdentity(path: work.path + "/a"))
        let b = try #require(FileIdentity(path: work.path + "/b"))
        let cache = TileResponseCache()
        cache.insert(Self.key(1), file: a, etag: "\"a\"", response: Self.prepared(10))
        #expect(cache.entry(Self.key(1), file: a) != nil)
        #expect(cache.entry(Self.key(1), file: b) == nil)
    }

    @Test func servedTilesAreKeptAnsweredAgainAndFollowAnUpdate() throws {
        let harness = try SyncHarness()
        let source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try harness.builder.add(id: "plain", source: source, format: "png")
        try harness.sync("plain")
        let server = try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(leafletPath: "/nonexistent",
            regionRefresh: 0.2), makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
        defer { server.stop() }
        let client = HTTPClient()
        func get(_ path: String, _ headers: [(name: String, value: String)] = []) throws -> HTTPResponse {
            var request = HTTPRequest(url: server.baseURL + path)
            request.headers = headers
            return try client.get(request)
        }
        #expect(try waitUntil { try get("/plain/1/0/0.png").status == 200 })

        let first = try get("/plain/1/0/0.png")
        #expect(server.service.tileCache.count >= 1)
        let second = try get("/plain/1/0/0.png")
        #expect(second.status == 200 && second.body == first.body && !first.body.isEmpty)
        for name in ["ETag", "Content-Type", "Cache-Control", "Vary", "Access-Control-Allow-Origin", "Content-Length"] {
            #expect(second.header(name) == first.header(name), "\(name)")
        }
        let etag = try #require(first.header("ETag"))
        let notModified = try get("/plain/1/0/0.png", [("If-None-Match", etag)])
        #expect(notModified.status == 304)
        #expect(notModified.header("Content-Length") == String(first.body.count))
        #expect(notModified.header("Content-Type") == nil)

        // Version 2 has other bytes for that tile: served once the watcher sees the new file.
        let work = try TemporaryDirectory()
        let changed = work.path + "/plain-2.mbtiles"
        try FileManager.default.copyItem(atPath: source, toPath: changed)
        let database = try SQLiteDatabase(path: changed, mode: .readWriteCreate)
        // Its `tiles` is a view over `map` and `images`: the image that tile shows changes.
        try database.execute(
            "UPDATE images SET tile_data = tile_data || x'00ff00ff' WHERE tile_id = (SELECT tile_id FROM map WHERE zoom_level = 1 AND tile_column = 0 AND tile_row = 1)")
        try harness.builder.add(id: "plain", source: changed, version: "2", format: "png")
        try harness.sync("plain")
        #expect(try waitUntil { try get("/plain/1/0/0.png").body == first.body + Data([0x00, 0xFF, 0x00, 0xFF]) })
        let updated = try get("/plain/1/0/0.png")
        #expect(updated.header("ETag") != etag)
        #expect(updated.header("Content-Length") == String(first.body.count + 4))
    }
}
