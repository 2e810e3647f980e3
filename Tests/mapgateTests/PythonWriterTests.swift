import Foundation
import MapGate
import TestSupport
import Testing

/// Where `scripts/install-deps` unpacks the python writers' wheels.
private let pythonWriters = "/usr/local/lib/mapgate-test-tools/python"

/// Two more writers we did not write (issue 38, item 6): python `mbutil` (a folder of tiles to
/// MBTiles, then its compression, which makes its `map`+`images` layout, beside the `grids`
/// tables it always makes) and the PMTiles reference's `pmtiles` package (`pmtiles-convert`: PMTiles to
/// MBTiles) on the format's own reference fixture. Each region is published, synced, served,
/// updated by a delta while served: the writer's tiles byte for byte, 304 for unchanged tiles,
/// TileJSON valid against the schema (``PublishingWorkspace/checkRoundTrip(v1:v2:id:extension:sourceLocation:)``).
@Suite(.enabled(if: FileManager.default.fileExists(atPath: pythonWriters + "/mbutil/util.py"), "mbutil and pmtiles from scripts/install-deps"))
struct PythonWriterTests {
    let workspace: PublishingWorkspace
    var work: TemporaryDirectory { workspace.work }

    init() throws {
        workspace = try PublishingWorkspace()
    }

    func python(_ script: String, _ arguments: [String]) throws {
        let result = try runProcess("/usr/bin/python3", ["-c", script] + arguments, environment: ["PYTHONPATH": pythonWriters])
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// Replaces the bytes of `count` tiles of the folder's deepest zoom with those of another tile.
    func changeSomeTiles(in folder: String, extension ext: String, count: Int) throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix("." + ext) }.sorted()
        let zoom = try #require(files.compactMap { $0.split(separator: "/").first.flatMap { Int($0) } }.max())
        let candidates = files.filter { $0.hasPrefix("\(zoom)/") }
        try #require(candidates.count > count + 1)
        let donor = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + files[0]))
        for path in candidates.prefix(count) { try donor.write(to: URL(fileURLWithPath: folder + "/" + path)) }
    }

    @Test func anMbutilRegionIsPublishedUpdatedByADeltaAndRevalidated() throws {
        let folder = work.file("tiles")
        try python(
            "import sys; from mbutil import mbtiles_to_disk; mbtiles_to_disk(sys.argv[1], sys.argv[2], silent=True)",
            [try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), folder])
        // mb-util --do_compression, step by step: 0.3.0's own call of it passes too few arguments
        // (and a second connection in the same process finds the file locked).
        func write(_ file: String) throws {
            try python("import sys; from mbutil import util; util.disk_to_mbtiles(sys.argv[1], sys.argv[2], format='png', silent=True)", [folder, file])
            try python(
                """
                import sys; from mbutil import util
                con = util.mbtiles_connect(sys.argv[1], True); cur = con.cursor()
                util.compression_prepare(cur, True); util.compression_do(cur, con, 256, True); util.compression_finalize(cur); con.commit()
                """, [file])
        }
        let v1 = work.file("v1.mbtiles")
        try write(v1)
        try changeSomeTiles(in: folder, extension: "png", count: 3)
        let v2 = work.file("v2.mbtiles")
        try write(v2)
        let tables = try runProcess("/usr/bin/sqlite3", [v2, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name"])
        #expect(tables.stdout.contains("images") && tables.stdout.contains("map"), "mbutil's compressed layout: \(tables.stdout)")
        try workspace.checkRoundTrip(v1: v1, v2: v2, id: "plain", extension: "png")
    }

    /// The PMTiles reference repository's raster fixture converted by `pmtiles-convert`, which
    /// writes `scheme=xyz` over TMS rows: publish names that row as the one to delete (issue 38,
    /// item 2), as a publisher does here; v2 is the converted file with three tiles changed.
    @Test func aPMTilesConvertedRegionIsPublishedUpdatedByADeltaAndRevalidated() throws {
        let v1 = work.file("v1.mbtiles")
        try python(
            "import sys; from pmtiles.convert import pmtiles_to_mbtiles; pmtiles_to_mbtiles(sys.argv[1], sys.argv[2])",
            [try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"), v1])
        let refused = try workspace.publish(v1, as: "toner", version: 1)
        if refused.status != 0 {
            #expect(refused.stderr.contains("DELETE FROM metadata WHERE name = 'scheme'") || refused.stderr.contains("scheme"), "\(refused.stderr)")
            let fixed = try runProcess("/usr/bin/sqlite3", [v1, "DELETE FROM metadata WHERE name = 'scheme'"])
            try #require(fixed.status == 0, "\(fixed.stderr)")
        }
        let v2 = work.file("v2.mbtiles")
        try FileManager.default.copyItem(atPath: v1, toPath: v2)
        let changed = try runProcess("/usr/bin/sqlite3", [
            v2, "UPDATE tiles SET tile_data = (SELECT tile_data FROM tiles WHERE zoom_level = 0) WHERE rowid IN (SELECT rowid FROM tiles WHERE zoom_level = 3 LIMIT 3)",
        ])
        try #require(changed.status == 0, "\(changed.stderr)")
        try workspace.checkRoundTrip(v1: v1, v2: v2, id: "toner", extension: "png")
    }
}
