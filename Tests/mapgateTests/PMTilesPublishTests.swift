import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `mapgate publish` from PMTiles v3 archives (issue 39): the reference repository's fixtures and
/// archives the reference writer (python `pmtiles`) makes are published, synced and installed with
/// the reference reader's tiles byte for byte; one archive published twice gives one package;
/// a new version of an archive comes as a delta; a malformed archive is refused with the reason.
@Suite(.enabled(if: PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps"))
struct PMTilesPublishTests {
    let workspace: PublishingWorkspace
    var work: TemporaryDirectory { workspace.work }

    init() throws {
        workspace = try PublishingWorkspace()
    }

    /// Copies archives into `in/` under `id.pmtiles`, with their versions in regions.json.
    func offer(_ archives: [(id: String, path: String, version: String)]) throws {
        var regions: [String: [String: String]] = [:]
        for archive in archives {
            let target = work.file("in/\(archive.id).pmtiles")
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: archive.path, toPath: target)
            regions["\(archive.id).pmtiles"] = ["version": archive.version]
        }
        try JSONSerialization.data(withJSONObject: regions).write(to: URL(fileURLWithPath: work.file("in/regions.json")))
    }

    func publish() throws -> ProcessResult {
        try workspace.mapgate.run(["publish", work.file("in"), "--out", work.file("out"), "--key", workspace.key.secretKeyFile])
    }

    func installed(_ id: String) throws -> [String: Data] {
        try PublishingWorkspace.tiles(workspace.mapgate.dataDirectory + "/regions/\(id).mbtiles")
    }

    @Test func theReferenceFixturesArePublishedAndInstalledWithTheirTiles() throws {
        let fixtures = [
            ("toner", "stamen_toner-raster-z3.pmtiles"), ("whitney", "usgs-mt-whitney-8-15-webp-512.pmtiles"),
            ("fixture1", "js-test-test_fixture_1.pmtiles"), ("fixture2", "js-test-test_fixture_2.pmtiles"),
        ]
        try offer(try fixtures.map { ($0.0, try TestPaths.shared("pmtiles/" + $0.1), "1") })
        let published = try publish()
        try #require(published.status == 0, "\(published.stderr)")
        let synced = try workspace.mapgate.run(["sync"] + fixtures.map(\.0))
        try #require(synced.status == 0, "\(synced.stderr)")
        for (id, name) in fixtures {
            let reference = try PMTilesReference.tiles(try TestPaths.shared("pmtiles/" + name))
            #expect(try installed(id) == reference, "\(id): the archive's tiles byte for byte")
        }
        let list = try workspace.mapgate.run(["list", "--json"])
        #expect(list.stdout.contains("\"whitney\"") && list.stdout.contains("webp"), "\(list.stdout)")
    }

    @Test func oneArchivePublishedTwiceGivesOnePackage() throws {
        try offer([("toner", try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"), "1")])
        var hashes: [String] = []
        let temporary = work.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        for out in ["out-a", "out-b"] {
            let result = try workspace.mapgate.run(
                ["publish", work.file("in"), "--out", work.file(out), "--key", workspace.key.secretKeyFile], environment: ["TMPDIR": temporary])
            try #require(result.status == 0, "\(result.stderr)")
            hashes.append(try SHA256Hasher.hex(ofFileAt: work.file("\(out)/packages/toner-1.mbtiles.gz")))
        }
        #expect(hashes[0] == hashes[1])
        // Nothing of the conversion is left in the temporary folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
    }

    /// PNG tiles gzip-compressed once more, as the spec allows and the reference writer writes
    /// (found by an attack: refused as "gzip (pbf)" tiles under a png format, with a fix that did
    /// not apply): published and installed as the images' own bytes.
    /// A PNG archive by the reference writer, its tiles gzip-compressed once more: `tiles` is
    /// Python, a list of ((z, x, y), bytes) pairs.
    func gzippedPNGArchive(_ name: String, maxZoom: Int, tiles: String, metadata: String = "{\"name\": sys.argv[2]}") throws -> String {
        let archive = work.file(name + ".pmtiles")
        let made = try runProcess("/usr/bin/python3", ["-c", """
            import gzip, sys
            from pmtiles.writer import Writer
            from pmtiles.tile import zxy_to_tileid, TileType, Compression
            png = lambda body: b"\\x89PNG\\r\\n\\x1a\\n" + body
            with open(sys.argv[1], "wb") as f:
                w = Writer(f)
                for (z, x, y), body in \(tiles):
                    w.write_tile(zxy_to_tileid(z, x, y), gzip.compress(png(body), mtime=0))
                w.finalize({"tile_type": TileType.PNG, "tile_compression": Compression.GZIP, "min_zoom": 0, "max_zoom": \(maxZoom),
                    "min_lon_e7": -1800000000, "min_lat_e7": -850000000, "max_lon_e7": 1800000000, "max_lat_e7": 850000000,
                    "center_zoom": 0, "center_lon_e7": 0, "center_lat_e7": 0}, \(metadata))
            """, archive, name], environment: ["PYTHONPATH": PMTilesReference.pythonPath])
        try #require(made.status == 0, "\(made.stderr)")
        return archive
    }

    @Test func gzipCompressedImageTilesAreUnpacked() throws {
        let archive = try gzippedPNGArchive(
            "gzipped", maxZoom: 1, tiles: "[((z, x, y), bytes([z * 4 + x * 2 + y]) * 300) for z, x, y in [(0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 1)]]")
        try offer([("gzipped", archive, "1")])
        let published = try publish()
        try #require(published.status == 0, "\(published.stderr)")
        try #require(try workspace.mapgate.run(["sync", "gzipped"]).status == 0)
        let tiles = try installed("gzipped")
        #expect(tiles.count == 5)
        #expect(tiles.values.allSatisfy { $0.starts(with: [0x89, 0x50, 0x4E, 0x47]) && $0.count == 308 }, "\(tiles.mapValues(\.count))")

        // An image tile that unpacks far past an image's size is a gzip bomb: refused, naming it.
        let bomb = try gzippedPNGArchive("bomb", maxZoom: 0, tiles: "[((0, 0, 0), bytes(4 << 20))]")
        try offer([("bomb", bomb, "1")])
        let refused = try publish()
        #expect(refused.status == 65 && refused.stderr.contains("tile 0/0/0 is gzip-compressed and does not unpack"), "\(refused.stderr)")
    }

    /// A metadata value over the 16 KiB mapgate shows (an 18 KB `description`) is kept in the
    /// region, as an MBTiles input's is (found by an attack: it vanished from the package and
    /// every install, without a word).
    @Test func aLongMetadataValueOfAnArchiveIsKept() throws {
        let archive = try gzippedPNGArchive(
            "long", maxZoom: 0, tiles: "[((0, 0, 0), bytes(300))]", metadata: "{\"name\": sys.argv[2], \"description\": \"d\" * 18000}")
        try offer([("long", archive, "1")])
        let published = try publish()
        try #require(published.status == 0, "\(published.stderr)")
        try #require(try workspace.mapgate.run(["sync", "long"]).status == 0)
        let length = try runProcess("/usr/bin/sqlite3", [workspace.mapgate.dataDirectory + "/regions/long.mbtiles", "SELECT length(value) FROM metadata WHERE name = 'description'"])
        #expect(length.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "18000", "\(length.stdout)\(length.stderr)")
    }

    /// Ctrl-C while an archive is being converted (found by an attack: a 123 MB conversion stayed
    /// in $TMPDIR, and no later run removed it): the run's folder goes with the run.
    @Test func ctrlCWhileAnArchiveIsConvertedLeavesNothingInTheTemporaryFolder() throws {
        // 14 MB of barely compressible tiles: a conversion that takes a moment.
        let source = work.file("big.mbtiles")
        let made = try runProcess("/usr/bin/python3", ["-c", """
            import os, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
            db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "big"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "5")])
            rows = [(z, x, y, b"\\x89PNG\\r\\n\\x1a\\n" + os.urandom(10000)) for z in range(6) for x in range(2 ** z) for y in range(2 ** z)]
            db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
            db.commit()
            """, source])
        try #require(made.status == 0, "\(made.stderr)")
        let archive = work.file("big.pmtiles")
        try PMTilesReference.convert(mbtiles: source, to: archive)
        try offer([("big", archive, "1")])
        let temporary = work.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let run = try workspace.mapgate.start(
            ["publish", work.file("in"), "--out", work.file("out"), "--key", workspace.key.secretKeyFile], environment: ["TMPDIR": temporary])
        // Stopped once the conversion is under way.
        let converting = waitUntil(timeout: 60) {
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
            return folders.contains { folder in
                let enumerator = FileManager.default.enumerator(atPath: temporary + "/" + folder)
                while let name = enumerator?.nextObject() as? String { if name.hasSuffix(".mbtiles") { return true } }
                return false
            }
        }
        try #require(converting, "\(run.stderr)")
        run.signal(SIGINT)
        #expect(run.wait() == 130, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [], "left in $TMPDIR")
        #expect(!FileManager.default.fileExists(atPath: work.file("out/catalog.json")))
    }

    /// A run killed with SIGKILL cannot remove its folder: the next run that converts an archive
    /// removes such folders of this user that no run holds (a run holds its folder's lock until
    /// it ends, in whatever PID namespace it runs: found by an attack, a run in a container lost
    /// its folder when its PID was read as dead here), and nothing else (found by an attack: they
    /// stayed for good). A publish of MBTiles files alone makes no folder there (found by the same
    /// attack: a TMPDIR that cannot be written failed every publish).
    @Test func aKilledRunsFolderIsRemovedAndMBTilesAloneNeedNone() throws {
        let temporary = work.file("tmp")
        let folders = [
            "mapgate-publish-4000-AbCdEf", "mapgate-publish-4001-GhIjKl", "mapgate-publish-4002-NoBody", "mapgate-publish-4003-Recent",
            "mapgate-publish-04004-zeroes", "other-4005-AbCdEf",
        ]
        for folder in folders {
            try FileManager.default.createDirectory(atPath: temporary + "/" + folder, withIntermediateDirectories: true)
            try work.write("tmp/\(folder)/converted.mbtiles", "left behind")
            if folder != "mapgate-publish-4003-Recent" {
                var old = [timeval(tv_sec: time(nil) - 3600, tv_usec: 0), timeval(tv_sec: time(nil) - 3600, tv_usec: 0)]
                #expect(utimes(temporary + "/" + folder, &old) == 0)
            }
        }
        #expect(chown(temporary + "/mapgate-publish-4002-NoBody", 65534, 65534) == 0)
        // A run that still holds its folder, wherever it runs.
        let held = open(temporary + "/mapgate-publish-4001-GhIjKl", O_RDONLY | O_DIRECTORY)
        defer { close(held) }
        #expect(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)
        try offer([("toner", try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"), "1")])
        let published = try workspace.mapgate.run(
            ["publish", work.file("in"), "--out", work.file("out"), "--key", workspace.key.secretKeyFile], environment: ["TMPDIR": temporary])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).sorted() == folders.filter { $0 != "mapgate-publish-4000-AbCdEf" }.sorted())
        // MBTiles alone, with a TMPDIR that is a file.
        try FileManager.default.removeItem(atPath: work.file("in"))
        try FileManager.default.createDirectory(atPath: work.file("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: work.file("in/plain.mbtiles"))
        try work.write("in/regions.json", #"{"plain.mbtiles": {"version": "1"}}"#)
        try work.write("not-a-folder", "")
        let plain = try workspace.mapgate.run(
            ["publish", work.file("in"), "--out", work.file("out2"), "--key", workspace.key.secretKeyFile], environment: ["TMPDIR": work.file("not-a-folder")])
        #expect(plain.status == 0, "\(plain.stderr)")
    }

    @Test(arguments: [("geography", "mbtileserver-geography-class-png.mbtiles"), ("cities", "mbtileserver-world_cities.mbtiles")])
    func archivesTheReferenceWriterMakesArePublished(_ id: String, _ fixture: String) throws {
        let archive = work.file("\(id)-written.pmtiles")
        // The reference writer needs metadata `format`, which the raster fixture lacks.
        let source = work.file(fixture)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + fixture), toPath: source)
        let format = try runProcess("/usr/bin/sqlite3", [source, "INSERT INTO metadata SELECT 'format', 'png' WHERE NOT EXISTS (SELECT 1 FROM metadata WHERE name = 'format')"])
        try #require(format.status == 0, "\(format.stderr)")
        try PMTilesReference.convert(mbtiles: source, to: archive)
        try offer([(id, archive, "1")])
        let published = try publish()
        try #require(published.status == 0, "\(published.stderr)")
        let synced = try workspace.mapgate.run(["sync", id])
        try #require(synced.status == 0, "\(synced.stderr)")
        let reference = try PMTilesReference.tiles(archive)
        #expect(try installed(id) == reference && !reference.isEmpty)
    }

    @Test func aNewVersionOfAnArchiveComesAsADelta() throws {
        let mbtiles = work.file("toner.mbtiles")
        _ = try runProcess(
            "/usr/bin/python3", ["-c", "import sys; from pmtiles.convert import pmtiles_to_mbtiles; pmtiles_to_mbtiles(sys.argv[1], sys.argv[2])",
                try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"), mbtiles], environment: ["PYTHONPATH": PMTilesReference.pythonPath])
        // pmtiles_to_mbtiles writes no `format`, which its own mbtiles_to_pmtiles needs.
        let format = try runProcess("/usr/bin/sqlite3", [mbtiles, "INSERT INTO metadata VALUES ('format', 'png')"])
        try #require(format.status == 0, "\(format.stderr)")
        let v1 = work.file("v1.pmtiles")
        try PMTilesReference.convert(mbtiles: mbtiles, to: v1)
        let changed = try runProcess("/usr/bin/sqlite3", [
            mbtiles, "UPDATE tiles SET tile_data = (SELECT tile_data FROM tiles WHERE zoom_level = 0) WHERE zoom_level = 3 AND tile_column < 2",
        ])
        try #require(changed.status == 0, "\(changed.stderr)")
        let v2 = work.file("v2.pmtiles")
        try PMTilesReference.convert(mbtiles: mbtiles, to: v2)
        try offer([("toner", v1, "1")])
        try #require(try publish().status == 0)
        try #require(try workspace.mapgate.run(["sync", "toner"]).status == 0)
        try offer([("toner", v2, "2")])
        let second = try publish()
        try #require(second.status == 0, "\(second.stderr)")
        let synced = try workspace.mapgate.run(["sync", "toner"])
        #expect(synced.stdout.contains("updated (delta, "), "\(synced.stdout) \(synced.stderr)")
        #expect(try installed("toner") == PMTilesReference.tiles(v2))
    }

    @Test func aMalformedArchiveIsRefusedWithTheReason() throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles")))
        // The root directory's length pushed past the end of the file.
        bytes[16] = 0xFF
        bytes[17] = 0xFF
        bytes[18] = 0xFF
        let broken = work.file("broken.pmtiles")
        try bytes.write(to: URL(fileURLWithPath: broken))
        try offer([("broken", broken, "1"), ("empty", try TestPaths.shared("pmtiles/js-test-empty.pmtiles"), "1")])
        let result = try publish()
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("in/broken.pmtiles: directory past the end"), "\(result.stderr)")
        #expect(result.stderr.contains("in/empty.pmtiles: not a PMTiles archive: the file is empty"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("out/catalog.json")))
    }
}
