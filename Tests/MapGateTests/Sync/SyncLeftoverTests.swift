import Foundation
import MapGate
import TestSupport
import Testing

/// What `sync` and `remove` leave behind: SQLite's side files of regions in WAL mode, and the
/// files of a run killed after installing ("Bad input, round two", item 8).
@Suite struct SyncLeftoverTests {
    let harness: SyncHarness

    init() throws {
        harness = try SyncHarness()
    }

    var regionFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: harness.directory.regionsPath)) ?? []).sorted()
    }

    func touch(_ path: String) throws {
        try Data("left".utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A copy of a real fixture switched to WAL mode, as GDAL leaves its files.
    func walCopy(_ name: String) throws -> String {
        let path = harness.work.file(name)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: path)
        let result = try runProcess("/usr/bin/sqlite3", [path, "PRAGMA journal_mode=WAL;"])
        #expect(result.stdout.contains("wal"), "\(result.stdout) \(result.stderr)")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return path
    }

    @Test func aRegionInWALModeLeavesNoSideFilesAndRemoveTakesThemAll() throws {
        try harness.builder.add(id: "gdal", source: try walCopy("gdal.mbtiles"), format: "png")
        try harness.sync("gdal")
        #expect(harness.leftovers.isEmpty, "\(harness.leftovers)")
        // Reading it (as list, tile and serve do) makes no side file either.
        let file = try harness.library.open("gdal", authorization: try harness.authorization())
        #expect(try file.tile(z: 2, x: 1, y: 3) != nil)
        #expect(regionFiles == ["gdal.mbtiles"], "\(regionFiles)")
        let mode = try runProcess("/usr/bin/sqlite3", ["-readonly", harness.directory.regionPath("gdal"), "PRAGMA journal_mode;"])
        #expect(mode.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "delete")
        #expect(try harness.library.verify("gdal")?.isIntact == true)

        // Side files an older mapgate's readers made go with the region, not those of `gdal.b`.
        let path = harness.directory.regionPath("gdal")
        for name in [path + "-wal", path + "-shm", harness.directory.regionPath("gdal.b") + "-wal"] { try touch(name) }
        _ = try harness.library.remove("gdal", lock: try DirectoryLock(directory: harness.directory))
        #expect(regionFiles == ["gdal.b.mbtiles-wal"], "\(regionFiles)")
    }

    @Test func aRunKilledAfterInstallingIsCleanedByTheNextOneAndOnlyForItsRegion() throws {
        let source = try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles")
        try harness.builder.add(id: "a", source: source, format: "png")
        try harness.builder.add(id: "a.b", source: source, format: "png")
        try harness.sync("a")
        // What `kill -9` between the rename and the clean-up leaves, for `a` and for `a.b`.
        let partial = harness.directory.partialPath
        let mine = ["a.0123456789abcdef.part", "a.0123456789abcdef.part.json", "a.installing.mbtiles", "a.installing.mbtiles-wal",
            "a.installing.mbtiles-shm", "a.patching.mbtiles", "a.patching.mbtiles-journal"]
        let theirs = ["a.b.0123456789abcdef.part", "a.b.0123456789abcdef.part.json", "a.b.installing.mbtiles", "a.b.installing.mbtiles-shm"]
        for name in mine + theirs { try touch(partial + "/" + name) }

        #expect(try harness.sync("a") == .upToDate(version: "1"))
        #expect(harness.leftovers == theirs.sorted(), "\(harness.leftovers)")

        // A region being installed drops what a dead run assembled, keeps its resumable download.
        for name in ["a.b.installing.mbtiles-wal"] { try touch(partial + "/" + name) }
        try harness.sync("a.b")
        #expect(harness.leftovers.isEmpty, "\(harness.leftovers)")
    }

    @Test func aPackageGzippedTwiceSaysSo() throws {
        let twice = harness.work.file("once.mbtiles.gz")
        let result = try runProcess("/bin/sh", ["-c", "gzip -c \"$0\" > \"$1\"", try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), twice])
        #expect(result.status == 0)
        try harness.builder.add(id: "twice", source: twice, format: "png", overrides: ["installedSize": 10_000_000])
        let error = #expect(throws: RegionError.self) { try harness.sync("twice") }
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("region twice: invalid package: not a readable SQLite file: it is still gzip-compressed after unpacking (gzipped twice?)"), "\(message)")
    }

    @Test func aCorruptDeltaIsNamedAsTheDeltaNotTheBase() throws {
        let work = try TemporaryDirectory()
        let base = work.file("base.mbtiles")
        try DeltaTestFiles.write(base, tiles: DeltaTestFiles.pyramid(maxZoom: 2, png: true, seed: 1), metadata: ["format": "png"])
        let delta = try work.write("delta.mbtiles", String(repeating: "not a database\n", count: 300))
        let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: base) }
        #expect(error?.path == delta)
        #expect(error?.localizedDescription.contains("not a readable SQLite file") == true, "\(String(describing: error))")
        #expect(error?.localizedDescription.contains("base.mbtiles") == false, "\(String(describing: error))")
    }
}
