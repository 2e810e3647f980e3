import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Round two: the ways around the gate, and the uses charged for nothing, that an unprivileged
/// user found in what landed after round one. Each ran as `nobody` against the real binary.
extension GateTamperTests {
    var stateCopies: [String] { [mapgate.stateHome + "/mapgate/state.sqlite", mapgate.dataDirectory + "/state.sqlite"] }

    func removeState(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func sqlite(_ path: String, _ sql: String) throws {
        let result = try runProcess("/usr/bin/sqlite3", [path, sql])
        #expect(result.status == 0, "\(result.stderr)")
    }

    func usesLeft(at time: String = "2027-03-01 00:00:00") throws -> Int? {
        let status = try mapgate.run(["status", "--json"], at: time)
        return try MapGateBinary.json(status.stdout)["usesLeft"] as? Int
    }

    /// Uses one prompted use; two are left after it with `maxPrompts` 2... one.
    func spendOneUse() throws {
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 01:00:00").status == 0)
        #expect(try promptsShown() == 1)
    }

    /// 1. A hand-made record from before seals (`user_version` 2, `prompts_shown` −1,000,000),
    /// with the user's copy deleted, loaded through the upgrade path: "1000005 uses left".
    @Test func anUnsealedLegacyRecordIsLostStateNotAGift() throws {
        try spendOneUse()
        let saved = work.file("saved.sqlite")
        try sqlite(stateCopies[1], "VACUUM INTO '\(saved)'")
        removeState(stateCopies[0])
        removeState(stateCopies[1])
        try sqlite(
            stateCopies[1],
            """
            CREATE TABLE gate (id INTEGER PRIMARY KEY CHECK (id = 1), pending_version TEXT, first_seen REAL,
                prompts_shown INTEGER NOT NULL DEFAULT 0, latest_clock REAL, last_release TEXT, last_lookup_at REAL,
                last_attempt_at REAL, last_lookup_error TEXT);
            INSERT INTO gate (id, prompts_shown) VALUES (1, -1000000);
            CREATE TABLE regions (id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, format TEXT NOT NULL,
                sha256 TEXT NOT NULL, size INTEGER NOT NULL, installed_at REAL NOT NULL, minzoom INTEGER, maxzoom INTEGER,
                bounds TEXT, source_url TEXT);
            ATTACH '\(saved)' AS saved;
            INSERT INTO regions SELECT id, name, version, format, sha256, size, installed_at, minzoom, maxzoom, bounds, source_url FROM saved.regions;
            PRAGMA user_version = 2;
            """)
        try mapgate.handBack()
        // `status` first: the gate is the first to open the database, through the upgrade path.
        // In 1.4.0 it said "1000002 uses left".
        let status = try mapgate.run(["status", "--json"], at: "2027-02-11 00:00:00")
        let left = try MapGateBinary.json(status.stdout)["usesLeft"] as? Int
        #expect((left ?? 0) <= 2, "\(status.stdout)")
        let result = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-11 00:00:00")
        // Lost state with a region installed: a lookup first, and the release (no date in this
        // answer) is past its grace, so no uses are left.
        #expect(result.status == 77, "\(result.stderr)")
        #expect(try usesLeft() == 0)
        #expect(try promptsShown() ?? -1 >= 0)
    }

    /// 4. `DELETE FROM gate` in one copy, the other removed, the region files hidden while
    /// `status` wrote a fresh record, then brought back: five new uses, repeatable.
    @Test(arguments: ["move", "chmod"])
    func hidingTheRegionsWhileTheStateIsLostGivesNoNewUses(how: String) throws {
        try spendOneUse()
        try sqlite(stateCopies[1], "DELETE FROM gate")
        removeState(stateCopies[0])
        let regions = mapgate.dataDirectory + "/regions"
        let hidden = (mapgate.userFolder ?? work.path) + "/hidden"
        if how == "move" {
            #expect(rename(regions, hidden) == 0)
            try FileManager.default.createDirectory(atPath: regions, withIntermediateDirectories: true)
        } else {
            #expect(chmod(regions, 0o300) == 0)
        }
        try mapgate.handBack()
        _ = try mapgate.run(["status"], at: "2027-02-10 02:00:00")
        if how == "move" {
            try FileManager.default.removeItem(atPath: regions)
            #expect(rename(hidden, regions) == 0)
        } else {
            #expect(chmod(regions, 0o755) == 0)
        }
        try mapgate.handBack()
        let result = try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 03:00:00")
        #expect(result.status == 77, "\(result.stderr)")
        #expect(try usesLeft() == 0)
    }

    /// 4. A new state folder and data directory, `status`, then a region file copied in with a
    /// hand-made `regions` row: a fresh record, five uses, on maps never synced under it.
    @Test func aRegionCopiedIntoFreshStateIsNotTakenAsInstalled() throws {
        try spendOneUse()
        let oldData = mapgate.dataDirectory
        let freshState = (mapgate.userFolder ?? work.path) + "/fresh-state"
        let freshData = (mapgate.userFolder ?? work.path) + "/fresh-data"
        func run(_ arguments: [String], at time: String) throws -> ProcessResult {
            let (program, rest) = mapgate.command(
                ["/usr/bin/faketime", time, mapgate.path] + arguments + ["--config", mapgate.configPath, "--data-dir", freshData])
            return try runProcess(program, rest, environment: mapgate.baseEnvironment.merging(["XDG_STATE_HOME": freshState]) { $1 })
        }
        try FileManager.default.createDirectory(atPath: freshData + "/regions", withIntermediateDirectories: true)
        try mapgate.handBack()
        #expect(try run(["status"], at: "2027-02-10 02:00:00").status == 0)
        try FileManager.default.copyItem(atPath: oldData + "/regions/geo.mbtiles", toPath: freshData + "/regions/geo.mbtiles")
        try sqlite(freshData + "/state.sqlite", "ATTACH '\(oldData)/state.sqlite' AS old; INSERT INTO regions SELECT * FROM old.regions")
        try mapgate.handBack()
        let result = try run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 03:00:00")
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("was not installed by 'mapgate sync'"), "\(result.stderr)")
    }

    /// 3. A server under a clock sped up 3600 times (monotonic time faked too) waited on a
    /// wall-clock timeout that never came: the gate closed elsewhere and it kept serving.
    @Test func aServerUnderASpedUpClockStillSeesTheGateClose() throws {
        let server = try mapgate.start(
            ["serve", "--port", "0"], fakeTime: "@2027-02-10 00:00:00 x3600",
            environment: ["DONT_FAKE_MONOTONIC": "0", "MAPGATE_GATE_REFRESH_SECONDS": "0.2"])
        let line = try #require(server.firstLine(), "stderr: \(server.stderr)")
        let base = String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast())
        // The server's own monotonic clock runs 3600 times too: its 10 s limit for a request's head
        // is 3 ms of real time, and a loaded machine may take longer to send one. Such a request
        // is closed unanswered (an empty reply), and asked again.
        func status() -> Int? { (try? HTTPClient().get(HTTPRequest(url: base + "/geo/0/0/0.png")))?.status }
        var first: Int?
        _ = waitUntil {
            first = status()
            return first != nil
        }
        #expect(first == 200, "stderr: \(server.stderr)")
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"], at: "2027-02-10 00:00:10").status == 0)  // the last use
        #expect(waitUntil { status() == 403 }, "stderr: \(server.stderr)")
        server.signal(SIGTERM)
        _ = server.wait()
    }

    /// 7. A policy's plain-HTTP lookup needs `allowInsecureLookup`: anyone on the path can
    /// answer "up to date" over HTTP.
    @Test func aPlainHTTPLookupNeedsThePolicyToSaySo() throws {
        try mapgate.writePolicy(["appID": 1, "lookupURL": workspace.lookupURL, "allowInsecureLookup": false, "maxPrompts": 2])
        let result = try mapgate.run(["status"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("plain HTTP"), "\(result.stderr)")
    }

    /// 7. The user's proxy must not answer for the store.
    @Test func theLookupIgnoresTheUsersProxy() throws {
        let proxyRoot = work.file("proxy")
        try FileManager.default.createDirectory(atPath: proxyRoot, withIntermediateDirectories: true)
        let proxy = try TestOrigin(root: proxyRoot)
        let before = workspace.origin.requests.filter { $0.path.hasPrefix("/lookup") }.count
        let result = try mapgate.run(
            ["check"], at: "2027-03-01 00:00:00",
            environment: ["http_proxy": proxy.baseURL, "HTTP_PROXY": proxy.baseURL, "https_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": ""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(proxy.requests.isEmpty, "\(proxy.requests.map(\.path))")
        #expect(workspace.origin.requests.filter { $0.path.hasPrefix("/lookup") }.count == before + 1)
    }

    /// Friction: "gate state copy … was missing; restoring it" on every new data directory, for
    /// honest users who lost nothing. A new data directory's copy is made without a word.
    @Test func aNewDataDirectorySaysNothingAboutTheState() throws {
        let other = (mapgate.userFolder ?? work.path) + "/other-data"
        let (program, arguments) = mapgate.command(
            ["/usr/bin/faketime", "2027-01-02 00:00:00", mapgate.path, "status", "--config", mapgate.configPath, "--data-dir", other])
        let result = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("warning"), "\(result.stderr)")
    }

    // MARK: Uses charged for nothing

    @Test(.enabled(if: GateTamperTests.user != nil, "a folder the user cannot write needs another user"))
    func tileIntoAFolderTheUserCannotWriteCostsNoUse() throws {
        let folder = work.file("roots-only")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(chmod(folder, 0o755) == 0)
        let result = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", folder + "/x.png"], at: "2027-03-01 00:00:00")
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("cannot create a file in"), "\(result.stderr)")
        #expect(try promptsShown() == 0)
    }

    @Test func syncWithEverythingUpToDateCostsNoUse() throws {
        for hour in 1...3 {
            let result = try mapgate.run(["sync"], at: "2027-03-0\(hour) 00:00:00")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("up to date"), "\(result.stdout)")
        }
        #expect(try promptsShown() == 0)
    }

    @Test func syncOfARegionThatNeedsANewerAppCostsNoUse() throws {
        try workspace.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), version: "2", format: "png",
            overrides: ["minimumAppVersion": "9.0.0"])
        try workspace.builder.write()
        let result = try mapgate.run(["sync", "geo"], at: "2027-03-01 00:00:00")
        #expect(result.status == 77, "\(result.stderr)")
        #expect(result.stderr.contains("needs mapgate 9.0.0"), "\(result.stderr)")
        #expect(try promptsShown() == 0)
    }

    @Test func syncOfAPackageThatIsNotThereCostsNoUse() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png", version: "2")
        try FileManager.default.removeItem(atPath: work.file("www/packages/geo-2.mbtiles.gz"))
        let result = try mapgate.run(["sync", "geo"], at: "2027-03-01 00:00:00")
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("HTTP 404"), "\(result.stderr)")
        #expect(try promptsShown() == 0)
    }

    @Test func aTileOutsideTheRegionsZoomRangeCostsNoUse() throws {
        let result = try mapgate.run(["tile", "geo", "12", "0", "0"], at: "2027-03-01 00:00:00")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("zoom range"), "\(result.stderr)")
        #expect(try promptsShown() == 0)
    }
}
