import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Round three (issue 25, part 2): more ways around the gate an unprivileged user found. Each runs
/// as `nobody` against the real binary.
extension GateTamperTests {
    /// Saves the state folder while uses remain, closes the gate, runs `meanwhile` (what the user
    /// does to the data directory), then puts the saved folder back.
    func closeTheGateThenBringBackTheStateFolder(meanwhile: () throws -> Void) throws {
        let home = mapgate.stateHome + "/mapgate"
        let saved = work.file("saved-state")
        #expect(try runProcess("/bin/cp", ["-a", home, saved]).status == 0)
        try closeTheGate()
        try meanwhile()
        try FileManager.default.removeItem(atPath: home)
        #expect(try runProcess("/bin/cp", ["-a", saved, home]).status == 0)
    }

    /// Found by an attack: the state folder's copy made the data directory's own file (a link,
    /// or XDG_STATE_HOME and --data-dir naming one folder) left one copy, and putting back a saved
    /// copy of it reopened a closed gate with its regions. Two copies that are one file are
    /// refused (64), naming both, before anything is counted or read from them.
    @Test func twoCopiesThatAreOneFileAreRefused() throws {
        let data = mapgate.dataDirectory
        let saved = work.file("saved-data-state.sqlite")
        try FileManager.default.copyItem(atPath: data + "/state.sqlite", toPath: saved)
        try closeTheGate()
        let home = mapgate.stateHome + "/mapgate/state.sqlite"
        try FileManager.default.removeItem(atPath: home)
        try FileManager.default.createSymbolicLink(atPath: home, withDestinationPath: data + "/state.sqlite")
        try FileManager.default.removeItem(atPath: data + "/state.sqlite")
        try FileManager.default.copyItem(atPath: saved, toPath: data + "/state.sqlite")
        if let user = mapgate.user { #expect(chown(data + "/state.sqlite", user, user) == 0) }
        for command in [["tile", "geo", "0", "0", "0", "-o", "/dev/null"], ["status"]] {
            let result = try mapgate.run(command, at: "2027-02-11 00:00:00")
            #expect(result.status == 64, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("are one file") && result.stderr.contains(data + "/state.sqlite"), "\(result.stderr)")
        }
    }

    /// Item 2: save the state folder while uses remain; once the gate is closed, make the data
    /// directory read-only (its copy then cannot be written) and put the saved folder back. The
    /// data directory's copy is still read and compared: the saved copy's lower generation loses.
    @Test func aReadOnlyDataDirectoryDoesNotLetAnOldCopyWin() throws {
        let data = mapgate.dataDirectory
        try closeTheGateThenBringBackTheStateFolder {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/state.sqlite" + suffix) }
            #expect(chmod(data, 0o555) == 0)
        }
        defer { chmod(data, 0o755) }
        let tile = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", "/dev/null"], at: "2027-02-11 00:00:00")
        #expect(tile.status == 77, "\(tile.stderr)")
        // Reading commands still work on the read-only data directory.
        #expect(try mapgate.run(["list"], at: "2027-02-11 00:00:00").status == 0)
    }

    /// Item 2, the other half: a copy that exists but cannot be read is not dropped in silence:
    /// the gate fails closed until a lookup (and the lookup finds the grace over: no uses left).
    @Test func aCopyThatCannotBeReadFailsClosed() throws {
        let data = mapgate.dataDirectory
        try closeTheGateThenBringBackTheStateFolder {
            #expect(chmod(data + "/state.sqlite", 0o000) == 0)
            #expect(chmod(data, 0o555) == 0)
        }
        defer {
            chmod(data, 0o755)
            chmod(data + "/state.sqlite", 0o644)
        }
        // Offline: the gate says why it cannot decide, and refuses until the store can be reached.
        try mapgate.configure(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        let offline = try mapgate.run(["check"], at: "2027-02-11 00:00:00")
        #expect(offline.status != 0, "\(offline.stderr)")
        #expect(offline.stderr.contains("exists but cannot be read"), "\(offline.stderr)")
        // Online: the lookup finds the grace long over, and the recovered record has no uses left.
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        let online = try mapgate.run(["check"], at: "2027-02-11 01:00:00")
        #expect(online.status == 77, "\(online.stdout) \(online.stderr)")
    }

    /// Item 3: the demo, left serving on a terminal, must serve its bundled region and nothing a
    /// user copies into its folder (nor the bundled file swapped for other tiles), keep its folders
    /// private, and keep its origin's port, so no other process answers its gate's lookups.
    @Test func theRunningDemoServesOnlyItsBundledRegion() throws {
        let demo = "\(mapgate.path) demo"
        let (program, arguments) = mapgate.command(["/usr/bin/script", "-qefc", demo, "/dev/null"])
        let running = try BackgroundProcess(program, arguments, environment: mapgate.baseEnvironment.merging(["TERM": "dumb"]) { $1 })
        var work: String?
        defer {
            // The demo first (it removes its folder as it stops), then the terminal around it.
            // Anchored: `script`'s own command line names the demo too, and a killed `script` kills it outright.
            _ = try? runProcess("/usr/bin/pkill", ["-TERM", "-f", "^" + mapgate.path + " demo"])
            _ = running.wait(timeout: 10)
            running.signal(SIGTERM)
            // A demo stopped by SIGTERM removes its folder; whatever happened, none is left in /tmp.
            if let work {
                #expect(!FileManager.default.fileExists(atPath: work), "the demo, stopped by SIGTERM, left \(work)")
                try? FileManager.default.removeItem(atPath: work)
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while !running.stdout.contains("viewer: "), Date() < deadline { usleep(50_000) }
        let output = running.stdout
        func after(_ marker: String) throws -> String {
            let range = try #require(output.range(of: marker), "\(output)")
            return String(output[range.upperBound...].prefix { !$0.isWhitespace && $0 != ";" })
        }
        let viewer = try after("viewer: ")
        let view = try #require(viewer.range(of: "/view/"))
        let base = String(viewer[..<view.lowerBound])
        let origin = try after("serves the project's fixtures at ")
        let data = try after("data in ")
        let folder = PathText.deletingLastComponent(data)
        work = folder
        var info = stat()
        #expect(stat(folder, &info) == 0 && info.st_mode & 0o777 == 0o700, "the demo's folder \(folder) must be private")

        // A region copied in, with its row: never served.
        let geo = data + "/regions/geo.mbtiles"
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), toPath: geo)
        let insert = "INSERT INTO regions (id, name, version, format, sha256, size, installed_at) VALUES ('geo', 'Geo', '1', 'png', 'x', 1, 0)"
        #expect(try runProcess("/usr/bin/sqlite3", [data + "/state.sqlite", insert]).status == 0)
        sleep(3)
        let client = HTTPClient()
        #expect(try client.get(HTTPRequest(url: base + "/geo/0/0/0.png")).status == 404)
        #expect(try client.get(HTTPRequest(url: base + "/demo-world/0/0/0.png")).status == 200)
        // The bundled file swapped for other tiles: no longer the pinned one, no longer served.
        try FileManager.default.removeItem(atPath: data + "/regions/demo-world.mbtiles")
        try FileManager.default.copyItem(atPath: geo, toPath: data + "/regions/demo-world.mbtiles")
        sleep(3)
        #expect(try client.get(HTTPRequest(url: base + "/demo-world/0/0/0.png")).status == 404)
        // The origin's port is still the demo's.
        let portText = try #require(origin.split(separator: ":").last)
        let port = try #require(UInt16(portText))
        #expect(throws: (any Error).self) { try HTTPListener(host: "127.0.0.1", port: port) }
    }

    /// Item 4: a wall clock held still (`faketime` with the same time on every run) while every
    /// lookup fails kept the grace period running for ever. The kernel's boot clock, which no
    /// preloaded library moves, carries the gate's time on: seconds of real time end it here.
    @Test func aHeldClockOfflineStillReachesTheEndOfTheGrace() throws {
        let answer = #"{"resultCount":1,"results":[{"trackId":1,"version":"1.5.0","trackViewUrl":"https://apps.example/mapgate","currentVersionReleaseDate":"2026-12-02T00:00:08Z"}]}"#
        try Data(answer.utf8).write(to: URL(fileURLWithPath: work.file("www/lookup.json")))
        let held = "2027-01-01 00:00:00"  // the grace ends 8 s after it: time for a slow (sanitized, loaded) run
        let checked = Date()
        #expect(try mapgate.run(["check"], at: held).status == 0)
        try mapgate.configure(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        let first = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", "/dev/null"], at: held)
        #expect(first.status == 0 && first.stderr.contains("prompts start"), "\(first.stderr)")
        // 10 s of real time after the check: past the grace's end on the boot clock.
        Thread.sleep(until: checked.addingTimeInterval(10))
        let later = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", "/dev/null"], at: held)
        #expect(later.status == 0)
        #expect(later.stderr.contains("2 uses left"), "the grace must be over after 10 s of real time: \(later.stderr)")
    }

    /// Issue 25, "Also": both copies write-locked by another process (`BEGIN IMMEDIATE` held) while
    /// the server's clock runs past the end of the grace: the server cannot check the gate, so it
    /// fails closed (503) for tiles and TileJSON until it can, as docs/gate.md says.
    @Test func aServerWhoseStateIsLockedAnswers503PastTheGrace() throws {
        let started = try mapgate.serve(fakeTime: "@2027-01-30 23:59:00 x1000", environment: ["MAPGATE_GATE_REFRESH_SECONDS": "0.5"])
        let (server, base) = (started.process, started.base)
        defer {
            server.signal(SIGTERM)
            _ = server.wait()
        }
        let client = HTTPClient()
        #expect(try client.get(HTTPRequest(url: base + "/geo/0/0/0.png")).status == 200)
        var holders: [SQLiteDatabase] = []
        for path in [mapgate.stateHome + "/mapgate/state.sqlite", mapgate.dataDirectory + "/state.sqlite"] {
            let holder = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            try holder.execute("BEGIN IMMEDIATE")
            holders.append(holder)
        }
        let deadline = Date().addingTimeInterval(20)
        var tile = 0
        repeat {
            usleep(100_000)
            tile = try client.get(HTTPRequest(url: base + "/geo/0/0/0.png")).status
        } while tile != 503 && Date() < deadline
        #expect(tile == 503, "\(server.stderr)")
        #expect(try client.get(HTTPRequest(url: base + "/geo.json")).status == 503)
        for holder in holders { try holder.execute("ROLLBACK") }
    }

    /// The honest side of item 2: a data directory whose state files cannot be written (folder and
    /// files read-only) is read and compared, the user's copy records the use, and the tile works.
    /// (Where SQLite opens such a copy read-only without an error, `GateStore` takes it as read-only
    /// too: `SQLiteDatabase.isReadOnly`.)
    @Test func aCopySQLiteCanOnlyReadIsComparedNotWritten() throws {
        let data = mapgate.dataDirectory
        let files = ["", "-wal", "-shm"].map { data + "/state.sqlite" + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
        for file in files { #expect(chmod(file, 0o444) == 0) }
        #expect(chmod(data, 0o555) == 0)
        defer {
            chmod(data, 0o755)
            for file in files { chmod(file, 0o644) }
        }
        let tile = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", "/dev/null"], at: "2027-02-10 01:00:00")
        #expect(tile.status == 0, "\(tile.stderr)")
        #expect(tile.stderr.contains("uses left"), "\(tile.stderr)")
    }
}
