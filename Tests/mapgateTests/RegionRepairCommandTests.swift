import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `list` marks a damaged region and `sync` repairs it, run as subprocesses.
@Suite struct RegionRepairCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    @Test func listMarksADamagedRegionAndSyncRepairsIt() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 8192)
        try handle.close()

        let list = try mapgate.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("1 (damaged)"), "\(list.stdout)")
        #expect(list.stderr.contains("region geo: damaged: its size is 8192 bytes"), "\(list.stderr)")
        // `list` and `verify` give the same advice (issue 27).
        let advice = "'mapgate sync geo' installs it again"
        #expect(list.stderr.contains(advice), "\(list.stderr)")
        let verify = try mapgate.run(["verify", "geo"])
        #expect(verify.status == 65)
        #expect(verify.stderr.contains(advice), "\(verify.stderr)")
        // Damage, not the publisher's catalog: `--json` tells the two apart.
        #expect(try MapGateBinary.json(try mapgate.run(["verify", "geo", "--json"]).stdout)["catalogDisagrees"] as? Bool == false)
        let json = try MapGateBinary.json(try mapgate.run(["list", "--json"]).stdout)
        #expect((json["damaged"] as? String)?.contains("its size is 8192 bytes") == true)

        let sync = try mapgate.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("geo 1: repaired (installed again"), "\(sync.stdout)")
        #expect(sync.stderr.contains("the installed file is damaged"), "\(sync.stderr)")
        let after = try mapgate.run(["list", "--json"])
        #expect(try MapGateBinary.json(after.stdout)["damaged"] is NSNull)
        #expect(!after.stderr.contains("damaged"))
    }

    /// A catalog at odds with its own package (its `contentHash` is not the package's tiles): a
    /// full package is installed on the catalog's word (issue 42, item 3), and `verify` hashes the
    /// tiles and says the publisher is at fault (65), not that the file is damaged: no advice to
    /// install it again, which would give the same tiles, and `list` calls nothing damaged.
    @Test func verifySaysACatalogAtOddsWithItsPackageIsThePublishers() throws {
        try workspace.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png",
            overrides: ["contentHash": "0123456789ABCDEF0123456789ABCDEF"])
        try workspace.builder.write()
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let verify = try mapgate.run(["verify", "geo"])
        #expect(verify.status == 65)
        #expect(verify.stderr.hasPrefix("error: region geo: its tiles hash to "), "\(verify.stderr)")
        #expect(verify.stderr.contains("not the 0123456789ABCDEF0123456789ABCDEF its catalog declared (contentHash)"), "\(verify.stderr)")
        #expect(!verify.stderr.contains("damaged") && !verify.stderr.contains("installs it again"), "\(verify.stderr)")
        let json = try MapGateBinary.json(try mapgate.run(["verify", "geo", "--json"]).stdout)
        #expect(json["ok"] as? Bool == false && json["unreadable"] as? Bool == false && json["catalogDisagrees"] as? Bool == true, "\(json)")
        #expect(try MapGateBinary.json(try mapgate.run(["list", "--json"]).stdout)["damaged"] is NSNull)
    }

    /// A data directory restored from a backup or copied to another disk (`cp -a`: the same
    /// bytes and time, a new inode) had every region hashed by every `list`, `tile`, `open` and
    /// `serve` until a `sync` reached its catalog, which offline may be never. The first look now
    /// records the new stamp (after hashing the file once); a running server says nothing of it
    /// (no "updated") and serves on.
    @Test(arguments: [["list"], ["tile", "geo", "0", "0", "0", "-o", "TILE"], ["verify", "geo"], ["serve"]])
    func aRestoredFileHasItsNewStampRecordedByTheFirstLook(_ command: [String]) throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        #expect(try runProcess("/bin/cp", ["-a", path, path + ".restored"]).status == 0)
        #expect(rename(path + ".restored", path) == 0)
        var info = stat()
        #expect(stat(path, &info) == 0)
        func recordedInode() throws -> String {
            try runProcess("/usr/bin/sqlite3", [mapgate.dataDirectory + "/state.sqlite", "SELECT file_inode FROM regions WHERE id = 'geo'"])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try recordedInode() != String(info.st_ino), "the copy has a new inode")

        if command == ["serve"] {
            let server = try mapgate.serve(["--verbose"])
            #expect(try HTTPClient().get(HTTPRequest(url: server.base + "/geo/0/0/0.png")).status == 200)
            Thread.sleep(forTimeInterval: 2.5)  // the watcher looks every second
            #expect(try HTTPClient().get(HTTPRequest(url: server.base + "/geo/1/0/0.png")).status == 200)
            server.process.signal(SIGTERM)
            #expect(server.process.wait() == 0)
            #expect(!server.process.stderr.contains("updated") && !server.process.stderr.contains("damaged"), "\(server.process.stderr)")
        } else {
            let result = try mapgate.run(command.map { $0 == "TILE" ? workspace.work.file("tile.png") : $0 })
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
        #expect(try recordedInode() == String(info.st_ino), "\(command) recorded the new stamp")
        #expect(try mapgate.run(["verify", "geo"]).status == 0)
        #expect(try mapgate.run(["sync", "geo"]).stdout.contains("up to date"))
    }

    /// Found by the attack on the stamps: a `list` recording the stamp of a restored file just
    /// before the server looked again made it say "updated" (the record had changed). The server
    /// is stopped while the file is restored and `list` records its stamp, so that its next look
    /// sees both at once: "reopened" quietly, and tiles served on.
    @Test func aStampRecordedByAnotherCommandIsNoUpdateForTheServer() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let server = try mapgate.serve(["--verbose"])
        #expect(try HTTPClient().get(HTTPRequest(url: server.base + "/geo/0/0/0.png")).status == 200)
        server.process.signal(SIGSTOP)
        #expect(try runProcess("/bin/cp", ["-a", path, path + ".restored"]).status == 0)
        #expect(rename(path + ".restored", path) == 0)
        #expect(try mapgate.run(["list"]).status == 0)
        server.process.signal(SIGCONT)
        Thread.sleep(forTimeInterval: 2.5)  // the watcher looks every second
        #expect(try HTTPClient().get(HTTPRequest(url: server.base + "/geo/1/0/0.png")).status == 200)
        server.process.signal(SIGTERM)
        #expect(server.process.wait() == 0)
        #expect(!server.process.stderr.contains("updated") && !server.process.stderr.contains("damaged"), "\(server.process.stderr)")
    }

    /// Found by the attack on the stamps: `verify` distrusted a rotten file's stamp only when it
    /// got the data directory's lock at once, and a `list` recording another region's stamp holds
    /// it a moment: `verify` said damaged, `sync` then said "up to date". The distrust waits a few
    /// seconds for the lock (here held by another holder for one).
    @Test func theDistrustWaitsForALockHeldAMoment() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let directory = DataDirectory(path: mapgate.dataDirectory)
        let library = RegionLibrary(directory: directory, state: try StateDatabase(directory: directory))
        let record = try library.region("geo")
        let released = DispatchSemaphore(value: 0)
        let taken = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let lock = try? DirectoryLock(directory: directory, timeout: 5)
            taken.signal()
            Thread.sleep(forTimeInterval: 1)
            withExtendedLifetime(lock) {}
            released.signal()
        }
        taken.wait()
        #expect(DirectoryLock.isHeld(in: directory))
        library.distrustStamp(of: record)
        released.wait()
        #expect(try library.region("geo").fileStamp?.inode == 0, "the stamp distrusted once the lock was let go")
    }

    /// Found by an attack: one byte of an installed file changed in place, its size, inode and
    /// time kept (as rot on a disk leaves them): `verify` called it damaged and advised `sync geo`,
    /// which said "up to date" (it trusts the stamp), and `mirror` left it out blaming gzip
    /// settings and said done. `verify` and `mirror` now distrust the stamp, so `sync` hashes the
    /// file and installs it again; `mirror` says the file is damaged (74).
    @Test func aFileRottenUnderItsStampIsRepairedAsAdvised() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let path = mapgate.dataDirectory + "/regions/geo.mbtiles"
        let installed = try Data(contentsOf: URL(fileURLWithPath: path))
        func rot() throws {
            var before = stat()
            #expect(stat(path, &before) == 0)
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: UInt64(installed.count / 2))
            let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
            try handle.seek(toOffset: UInt64(installed.count / 2))
            try handle.write(contentsOf: Data([byte ^ 0x5A]))
            try handle.close()
            var times = [before.st_atim, before.st_mtim]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            var after = stat()
            #expect(stat(path, &after) == 0 && after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        }
        try rot()
        let verify = try mapgate.run(["verify", "geo"])
        #expect(verify.status == 65 && verify.stderr.contains("'mapgate sync geo' installs it again"), "\(verify.stderr)")
        #expect(try mapgate.run(["list"]).stderr.contains("region geo: damaged"), "list says so too, once verify found it")
        let sync = try mapgate.run(["sync", "geo"])
        #expect(sync.status == 0 && sync.stdout.contains("geo 1: repaired (installed again"), "\(sync.stdout)\(sync.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == installed)

        try rot()
        let mirror = try mapgate.run(["mirror", workspace.work.file("stick")])
        #expect(mirror.status == 74, "\(mirror.stdout)\(mirror.stderr)")
        #expect(mirror.stderr.contains("the installed file is damaged (its SHA-256 is"), "\(mirror.stderr)")
        let again = try mapgate.run(["sync", "geo"])
        #expect(again.status == 0 && again.stdout.contains("geo 1: repaired (installed again"), "\(again.stdout)\(again.stderr)")
        #expect(try mapgate.run(["verify", "geo"]).status == 0)
    }
}

