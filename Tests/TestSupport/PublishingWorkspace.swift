import Foundation
import MapGate
import MapGateDemo

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
}
