import Foundation
import MapGate
import MapGateDemo
import Testing

/// A publisher and a user in one temporary folder: a key, `in/` (what `publish` reads), `out/`
/// (what it writes, served by a test origin) and the binary trusting the key, its catalog at the
/// origin. For the tests of files written by real writers (tippecanoe, GDAL).
public final class PublishingWorkspace {
    public let work: TemporaryDirectory
    public let mapgate: MapGateBinary
    public let key: PublisherKey
    public let origin: TestOrigin

    public init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
        key = try PublisherKey(in: work.path)
        for folder in ["in", "out"] { try FileManager.default.createDirectory(atPath: work.file(folder), withIntermediateDirectories: true) }
        origin = try TestOrigin(root: work.file("out"))
        try mapgate.writePolicy(["trustedKeys": [try key.publicKeyLine], "requireSignedCatalog": true])
        try mapgate.writeConfig(["catalogURL": origin.baseURL + "/catalog.json"])
    }

    /// Publishes `file` as region `id` at `version` (the only file in `in/`).
    public func publish(_ file: String, as id: String, version: Int) throws -> ProcessResult {
        let input = work.file("in/\(id).mbtiles")
        try? FileManager.default.removeItem(atPath: input)
        try FileManager.default.copyItem(atPath: file, toPath: input)
        try work.write("in/regions.json", #"{"\#(id).mbtiles": {"version": "\#(version)"}}"#)
        return try mapgate.run(["publish", work.file("in"), "--out", work.file("out"), "--key", key.secretKeyFile])
    }

    /// Every tile of an MBTiles file by `z/x/y` (XYZ).
    public static func tiles(_ path: String) throws -> [String: Data] {
        var tiles: [String: Data] = [:]
        try MBTilesFile(path: path).forEachTile { z, x, y, data in tiles["\(z)/\(x)/\(y)"] = data }
        return tiles
    }

    /// Issue 38, item 6, for one writer's two versions of a region: publishes `v1`, syncs it,
    /// serves it, publishes `v2` (a delta must be offered and used), syncs while the server runs,
    /// and checks that the installed tiles are the writer's byte for byte, that every unchanged
    /// tile is answered 304 to the validator it had before the update and every changed one is
    /// sent again, and that the TileJSON validates against TileJSON 3.0.0's own schema.
    /// Vector tiles are asked for with `Accept-Encoding: gzip`, so stored gzip bytes come as they are.
    public func checkRoundTrip(v1: String, v2: String, id: String, extension ext: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try Self.tiles(v1)
        let after = try Self.tiles(v2)
        let changed = Set(after.keys.filter { before[$0] != after[$0] })
        try #require(!changed.isEmpty && changed.count < after.count, "\(changed.count) of \(after.count) tiles changed", sourceLocation: sourceLocation)
        let first = try publish(v1, as: id, version: 1)
        try #require(first.status == 0, "\(first.stderr)", sourceLocation: sourceLocation)
        let installed = try mapgate.run(["sync", id])
        try #require(installed.status == 0, "\(installed.stderr)", sourceLocation: sourceLocation)
        let server = try mapgate.serve()
        defer { server.process.stop() }
        func get(_ address: String, etag: String? = nil) throws -> HTTPResponse {
            var request = HTTPRequest(url: server.base + "/\(id)/\(address).\(ext)")
            if ext == "pbf" { request.headers.append((name: "Accept-Encoding", value: "gzip")) }
            if let etag { request.headers.append((name: "If-None-Match", value: etag)) }
            return try HTTPClient().get(request)
        }
        var validators: [String: String] = [:]
        for address in after.keys where before[address] != nil {
            let answer = try get(address)
            #expect(answer.status == 200 && answer.body == before[address], "\(address) before the update", sourceLocation: sourceLocation)
            validators[address] = answer.header("ETag")
        }
        let second = try publish(v2, as: id, version: 2)
        #expect(second.status == 0, "\(second.stderr)", sourceLocation: sourceLocation)
        let synced = try mapgate.run(["sync", id])
        #expect(synced.stdout.contains("updated (delta, "), "\(synced.stdout) \(synced.stderr)", sourceLocation: sourceLocation)
        #expect(try Self.tiles(mapgate.dataDirectory + "/regions/\(id).mbtiles") == after, "the writer's tiles byte for byte", sourceLocation: sourceLocation)
        #expect(
            waitUntil(timeout: 5) {
                (try? JSONDecoder().decode(TileJSON.self, from: HTTPClient().get(HTTPRequest(url: server.base + "/\(id).json")).body).version) == "2.0.0"
            }, sourceLocation: sourceLocation)
        var revalidated = 0
        for (address, etag) in validators {
            let answer = try get(address, etag: etag)
            if changed.contains(address) {
                #expect(answer.status == 200 && answer.body == after[address], "\(address) changed: sent again", sourceLocation: sourceLocation)
            } else {
                #expect(answer.status == 304, "\(address) unchanged: 304, got \(answer.status)", sourceLocation: sourceLocation)
                revalidated += 1
            }
        }
        #expect(revalidated == validators.count - changed.intersection(validators.keys).count, sourceLocation: sourceLocation)
        let document = work.file("\(id).tilejson")
        try HTTPClient().get(HTTPRequest(url: server.base + "/\(id).json")).body.write(to: URL(fileURLWithPath: document))
        let check = try runProcess("/usr/bin/python3", [
            "-c", "import json, sys, jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))",
            try TestPaths.shared("tilejson/schema-3.0.0.json"), document,
        ])
        #expect(check.status == 0, "\(check.stderr)", sourceLocation: sourceLocation)
    }
}
