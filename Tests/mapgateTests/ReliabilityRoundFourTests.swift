import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Reliability, round four (issue 40): a stick SQLite cannot use does not lock the user out,
/// mirrors never say "done" when they are not, and a mirror's files are opened only as regular
/// files of its own.
extension MirrorTests {
    /// Item 2: a stick too small for a package: the region is left out, the reason said, and
    /// `mirror` exits 74 (also with -q), so `mirror DIR -q && eject` does not report success.
    @Test(.enabled(if: TinyDisk.canMount, "needs root to mount a small tmpfs"))
    func aMirrorThatCouldNotWriteAPackageExits74() throws {
        try publish(version: "1")
        #expect(try a.run(["sync", "geo", "plain"], at: Self.day1).status == 0)
        let small = TinyDisk.self
        let disk = try small.init(at: work.file("small-stick"))
        defer { disk.unmount() }
        // Room for the catalog and the small package, not for the 1.7 MB one: fill all but ~600 KB.
        let filler = disk.path + "/filler"
        #expect(try runProcess("/usr/bin/fallocate", ["-l", "1400k", filler]).status == 0)
        let quiet = try a.run(["mirror", disk.path + "/maps", "-q"], at: Self.day1)
        #expect(quiet.status == 74, "\(quiet.stdout) \(quiet.stderr)")
        #expect(quiet.stderr.contains("error: the mirror") && quiet.stderr.contains("lacks"), "\(quiet.stderr)")
        let json = try a.run(["mirror", disk.path + "/maps", "--json"], at: Self.day1)
        #expect(json.status == 74)
        let summary = try MapGateBinary.json(try #require(json.stdout.split(separator: "\n").last.map(String.init)))
        #expect((summary["failed"] as? [String])?.isEmpty == false, "\(json.stdout)")
        // Room made: the same command completes and says so.
        try FileManager.default.removeItem(atPath: filler)
        #expect(try a.run(["mirror", disk.path + "/maps", "-q"], at: Self.day1).status == 0)
    }

    /// Item 2 for a delta (issue 43's quiet `try?`): a region updated by a delta is carried as its
    /// delta; when that delta cannot be written (here its name is taken by a folder, as a
    /// half-broken stick can have), the mirror fails (74) and says which region lacks, instead of
    /// leaving it out without a word.
    @Test func aDeltaThatCouldNotBeWrittenFailsTheMirror() throws {
        try publish(version: "1")
        #expect(try a.run(["sync", "geo"], at: Self.day1).status == 0)
        try publish(version: "2", at: "2027-01-02 12:00:00")
        #expect(try a.run(["sync"], at: Self.day2).status == 0)
        let saved = try JSONSerialization.jsonObject(with: try #require(bytes(a.dataDirectory + "/catalog.json"))) as? [String: Any]
        let geo = try #require((saved?["regions"] as? [[String: Any]])?.first { $0["id"] as? String == "geo" })
        let sha256 = try #require((geo["deltas"] as? [[String: Any]])?.first?["sha256"] as? String)
        try FileManager.default.createDirectory(atPath: stick + "/packages/" + sha256 + "/taken", withIntermediateDirectories: true)
        let mirror = try a.run(["mirror", stick, "-q"], at: Self.day2)
        #expect(mirror.status == 74, "\(mirror.stdout) \(mirror.stderr)")
        #expect(mirror.stderr.contains("geo"), "\(mirror.stderr)")
    }

    /// Item 2: a second `mirror` of the same folder while one writes is refused at once, instead
    /// of deleting the first one's half-written package.
    @Test func aSecondWriterOfTheSameMirrorIsRefused() throws {
        try publish(version: "1")
        #expect(try a.run(["sync", "geo", "plain"], at: Self.day1).status == 0)
        try FileManager.default.createDirectory(atPath: stick, withIntermediateDirectories: true)
        // Another writer holds the folder's lock (as a running `mapgate mirror` does).
        let holder = try BackgroundProcess("/usr/bin/flock", [stick + "/.mapgate-mirror.lock", "sleep", "30"])
        defer { holder.signal(SIGKILL) }
        #expect(waitUntil { FileManager.default.fileExists(atPath: stick + "/.mapgate-mirror.lock") })
        usleep(200_000)
        let second = try a.run(["mirror", stick], at: Self.day1)
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("another mapgate mirror is writing"), "\(second.stderr)")
        holder.signal(SIGKILL)
        _ = holder.wait()
        #expect(try a.run(["mirror", stick], at: Self.day1).status == 0)
    }

    /// Item 3: a FIFO named `catalog.json` (or `mirror.json`) on a stick made `sync --from` wait
    /// for a writer for ever; every file of a mirror is opened only as a regular file.
    @Test(arguments: ["catalog.json", "catalog.json.minisig"])
    func aFIFOInAMirrorIsRefusedAtOnce(_ name: String) throws {
        try mirrorVersionOne()
        let path = stick + "/" + name
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        let started = Date()
        let sync = try b.run(["sync", "--from", stick, "geo"], at: Self.day1)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(sync.status == 65, "\(sync.stderr)")
        #expect(sync.stderr.contains("not a regular file: refused"), "\(sync.stderr)")
    }

    /// Item 11: a package in a folder mirror that is a symbolic link (to `/etc/shadow`, say) is
    /// not opened: a mirror's files must be its own.
    @Test func aSymbolicLinkInAFolderMirrorIsRefused() throws {
        try mirrorVersionOne()
        let geo = try package("geo")
        let secret = work.file("secret")
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: secret))
        try FileManager.default.removeItem(atPath: geo)
        try FileManager.default.createSymbolicLink(atPath: geo, withDestinationPath: secret)
        let sync = try b.run(["sync", "--from", stick, "geo"], at: Self.day1)
        #expect(sync.status != 0, "\(sync.stdout)")
        #expect(sync.stderr.contains("symbolic link: refused"), "\(sync.stderr)")
        #expect(!sync.stderr.contains("1000"), "the refusal tells the size of a file it must not read: \(sync.stderr)")
    }
}

extension FullDiskTests {
    /// Item 1: a `--data-dir` SQLite cannot use (here a full disk; on a FAT stick the same) fails
    /// that run with the reason, and leaves no half-made `state.sqlite` that the next run would
    /// take for tampering: the user's own record does not go into recovery, and their regions in
    /// their usual data directory stay usable; `status` would say so if it did.
    @Test(.enabled(if: TinyDisk.canMount, "needs root to mount a small tmpfs"))
    func aDataDirectoryThatCannotBeUsedDoesNotLockTheUserOut() throws {
        let workspace = try CLIWorkspace()
        let mapgate = workspace.mapgate
        try workspace.offer("small", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "small"]).status == 0)
        let disk = try TinyDisk(at: workspace.work.file("stick"))
        defer { disk.unmount() }
        try FileManager.default.createDirectory(atPath: disk.path + "/maps", withIntermediateDirectories: true)
        try disk.make("full")
        let (program, arguments) = mapgate.command([mapgate.path, "sync", "small", "--config", mapgate.configPath, "--data-dir", disk.path + "/maps"])
        let failed = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(failed.status == 74, "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/maps/state.sqlite"), "a half-made state database stays behind")
        // Again: the same clear failure, and nothing taken as tampering.
        let again = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(again.status == 74, "\(again.stderr)")
        #expect(!again.stderr.contains("changed outside mapgate"), "\(again.stderr)")
        // The usual data directory: served as before, and no recovery.
        let tile = try mapgate.run(["tile", "small", "0", "0", "0", "-o", workspace.work.file("t.png")])
        #expect(tile.status == 0, "\(tile.stderr)")
        let status = try mapgate.run(["status"])
        #expect(status.status == 0)
        #expect(!status.stdout.contains("recovering"), "\(status.stdout)")
        // A record that does recover (the user's copy deleted) says so in `status`, not only "up to date".
        try FileManager.default.removeItem(atPath: mapgate.stateHome + "/mapgate")
        let recovering = try mapgate.run(["status"])
        #expect(recovering.stdout.contains("recovering"), "\(recovering.stdout)")
    }
}

/// Items 5 to 8: what a kill between two steps leaves is finished or cleaned by the next run,
/// and a publisher's two catalog files are read as a pair.
@Suite struct KilledRunsTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
    }

    /// Item 5: `remove` deletes the file first and the record last. Killed in between, the record
    /// stays with its file gone, and the next `remove` finishes; a file no record names (an older
    /// mapgate killed after the record went) is removed too, not "not installed".
    @Test func aRemoveCutInTheMiddleIsFinishedByTheNext() throws {
        let file = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let copy = workspace.work.file("geo-copy.mbtiles")
        try FileManager.default.copyItem(atPath: file, toPath: copy)
        try FileManager.default.removeItem(atPath: file)
        let finished = try mapgate.run(["remove", "geo"])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try mapgate.run(["list", "--json"]).stdout.isEmpty)
        // The other order: the file without its record.
        try FileManager.default.copyItem(atPath: copy, toPath: file)
        let orphan = try mapgate.run(["remove", "geo"])
        #expect(orphan.status == 0, "\(orphan.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    /// Item 7: temporary files of killed runs (`.NAME.PID.tmp` of a process that is gone,
    /// Foundation's `.dat.nosync*`) are removed by the next sync; a live process's are not.
    @Test func theNextSyncRemovesWhatKilledRunsLeft() throws {
        let data = mapgate.dataDirectory
        // A pending-install record's own temporary file too (bench/random-kill.py found one in regions/).
        let dead = [
            data + "/.catalog.json.99999999.tmp", data + "/.catalog.json.minisig.99999998.tmp", data + "/partial/.dat.nosyncAB12",
            data + "/regions/..plain.pending.json.99999997.tmp",
        ]
        let alive = data + "/.catalog.json.\(getpid()).tmp"
        try FileManager.default.createDirectory(atPath: data + "/regions", withIntermediateDirectories: true)
        for path in dead + [alive] { FileManager.default.createFile(atPath: path, contents: Data("x".utf8)) }
        #expect(try mapgate.run(["sync"]).status == 0)
        for path in dead { #expect(!FileManager.default.fileExists(atPath: path), "\(path) stayed") }
        #expect(FileManager.default.fileExists(atPath: alive), "a running process's file was removed")
    }

    /// Item 6: `sync` saves the catalog's pair beside the old one, then renames the signature
    /// and the catalog. Cut between the two renames, the pair read is the new one, which
    /// verifies: `catalog --saved` does not say it "was changed", which nobody did.
    @Test func aSaveCutBetweenItsRenamesIsReadAsTheNewPair() throws {
        let key = try PublisherKey(in: workspace.work.path)
        try mapgate.writePolicy(["trustedKeys": [try key.publicKeyLine], "requireSignedCatalog": true])
        try workspace.builder.write(extra: ["expires": "2100-01-01T00:00:00Z"])
        try key.sign(workspace.work.file("www/catalog.json"))
        #expect(try mapgate.run(["sync"]).status == 0)
        let data = mapgate.dataDirectory
        let old = try Data(contentsOf: URL(fileURLWithPath: data + "/catalog.json"))
        // A new catalog from the publisher, saved up to the signature's rename.
        var document = try #require(try JSONSerialization.jsonObject(with: old) as? [String: Any])
        document["serial"] = ((document["serial"] as? Int) ?? 1) + 1
        let newer = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
        let staged = workspace.work.file("new-catalog.json")
        try newer.write(to: URL(fileURLWithPath: staged))
        try key.sign(staged)
        try newer.write(to: URL(fileURLWithPath: data + "/catalog.json.pending"))
        try FileManager.default.removeItem(atPath: data + "/catalog.json.minisig")
        try FileManager.default.copyItem(atPath: staged + ".minisig", toPath: data + "/catalog.json.minisig")
        let saved = try mapgate.run(["catalog", "--saved"])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(!saved.stderr.contains("was changed"), "\(saved.stderr)")
    }
}

/// Item 9: `publish` refuses, with the reason, a vector tile that is a gzip bomb (which no server
/// can answer to a client without gzip) and a tiles table without its unique index that holds two
/// rows for one tile (which one a reader gets is SQLite's choice). Nothing is written.
@Suite struct PublishRefusesTilesNoServerCanAnswerTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.writeConfig([:])
        try FileManager.default.createDirectory(atPath: work.file("in"), withIntermediateDirectories: true)
    }

    func publish(_ edit: String) throws -> ProcessResult {
        let path = work.file("in/cities.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: path)
        let edited = try runProcess("/usr/bin/sqlite3", [path, edit])
        try #require(edited.status == 0, "\(edited.stderr)")
        let key = try PublisherKey(in: work.path)
        return try mapgate.run(["publish", work.file("in"), "--out", work.file("out"), "--key", key.secretKeyFile])
    }

    /// Makes `bomb.gz` with `script` (`sh -c`, the file's path as `$0`), publishes the region
    /// with it as its zoom-0 tile, and expects the refusal (65) to say `reason`.
    func expectTileRefused(madeBy script: String, saying reason: String, _ more: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bomb = work.file("bomb.gz")
        let made = try runProcess("/bin/sh", ["-c", script, bomb])
        try #require(made.status == 0, "\(made.stderr)", sourceLocation: sourceLocation)
        let result = try publish("UPDATE tiles SET tile_data = readfile('\(bomb)') WHERE zoom_level = 0")
        #expect(result.status == 65, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(reason) && (more.isEmpty || result.stderr.contains(more)), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: work.file("out/catalog.json")), sourceLocation: sourceLocation)
    }

    /// 20 MiB of zeros, gzip-compressed to about 20 KB: over the 16 MiB a server unpacks. As it
    /// is, with its trailer made to say 1,000 bytes, and followed by a second member of a few
    /// bytes (whose trailer is the last): each refused (found by an attack: the check read the
    /// trailer only, and the last two were published and installed).
    @Test(arguments: ["", " && printf '\\350\\003\\000\\000' | dd of=\"$0\" bs=1 seek=$(($(stat -c %s \"$0\") - 4)) conv=notrunc 2>/dev/null", " && printf x | gzip >> \"$0\""])
    func aGzipBombTileIsRefused(_ disguise: String) throws {
        try expectTileRefused(madeBy: "head -c 20971520 /dev/zero | gzip -9 > \"$0\"" + disguise, saying: "inflates to more than the 16 MiB", "gzip bomb")
    }

    /// A broken member before the bomb (its CRC-32 changed) hid the bomb from the check (found by
    /// the attack on it): a compressed tile that does not unpack is refused too, naming why.
    @Test func aBrokenMemberBeforeABombIsRefused() throws {
        try expectTileRefused(
            madeBy: """
                head -c 20971520 /dev/zero | gzip -9 > "$0.bomb" && printf x | gzip -n > "$0" &&
                printf '\\000\\000\\000\\000' | dd of="$0" bs=1 seek=$(($(stat -c %s "$0") - 8)) conv=notrunc 2>/dev/null &&
                cat "$0.bomb" >> "$0"
                """, saying: "is compressed but does not unpack")
    }

    /// The same bomb wrapped in zlib's format, as some older tools stored `pbf` tiles (which the
    /// server unpacks too): refused.
    @Test func aZlibBombTileIsRefused() throws {
        try expectTileRefused(madeBy: "python3 -c 'import sys, zlib; open(sys.argv[1], \"wb\").write(zlib.compress(bytes(20 << 20), 9))' \"$0\"", saying: "gzip bomb")
    }

    @Test func twoRowsForOneTileAreRefused() throws {
        let result = try publish("DROP INDEX tile_index; INSERT INTO tiles SELECT * FROM tiles WHERE zoom_level = 1 LIMIT 1")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("is stored twice") && result.stderr.contains("unique index"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("out/catalog.json")))
    }

    /// Issue 38, item 3: a tile outside its zoom level's grid (GDAL's ogr2ogr wrote 0/1/0) is
    /// refused with the statement that removes such rows.
    @Test func aTileOutsideItsZoomsGridIsRefused() throws {
        let result = try publish("INSERT INTO tiles SELECT 0, 1, 0, tile_data FROM tiles WHERE zoom_level = 0")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("tile 0/1/0 (z/x/TMS row) lies outside zoom 0's grid") && result.stderr.contains("DELETE FROM tiles WHERE"), "\(result.stderr)")
    }
}
