import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A use is counted only when it is delivered (issue 25, part 1): a tile's bytes written where the
/// user asked, a region or style installed, a server that answered a tile. Each run here fails
/// for a reason that is not the user's (or the user chose to stop) while the gate prompts, and
/// must leave the count where it was. Run as an unprivileged user (as GateTamperTests are) when
/// the tests run as root: root writes read-only files.
@Suite struct GateDeliveryTests {
    static let user: uid_t? = geteuid() == 0 ? 65534 : nil
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    let during = "2027-02-05 00:00:00"
    /// A folder the user running mapgate may write.
    var scratch: String { mapgate.userFolder ?? workspace.work.path }

    init() throws {
        workspace = try CLIWorkspace.prompting(user: Self.user)
    }

    func promptsShown() throws -> Int {
        try workspace.promptsShown(at: during)
    }

    /// Runs `arguments` and expects exit `status` with no use counted.
    @discardableResult
    func expectNoUse(
        _ arguments: [String], status: Int32, environment: [String: String] = [:], standIns: [String: String] = [:], _ comment: Comment
    ) throws -> ProcessResult {
        let before = try promptsShown()
        let result = try mapgate.run(arguments, at: during, environment: environment, standIns: standIns)
        #expect(result.status == status, "\(comment): \(result.stderr)")
        #expect(try promptsShown() == before, "\(comment): a use was counted; \(result.stderr)")
        return result
    }

    @Test func aDeliveredTileCountsOneUse() throws {
        let before = try promptsShown()
        #expect(try mapgate.run(["tile", "plain", "4", "0", "12", "-o", scratch + "/t.png"], at: during).status == 0)
        #expect(try promptsShown() == before + 1)
    }

    /// Issue 28: a region named twice (`sync geo geo`) is synced once, said once, and costs one use.
    @Test func aRegionNamedTwiceIsSyncedOnceForOneUse() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        let before = try promptsShown()
        let result = try mapgate.run(["sync", "geo", "geo"], at: during)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "geo 1: installed").count == 2, "\(result.stdout)")
        #expect(try promptsShown() == before + 1)
        let again = try mapgate.run(["sync", "geo", "geo", "--json"], at: during)
        #expect(again.status == 0 && again.stdout.components(separatedBy: "\"region\":\"geo\"").count == 2, "\(again.stdout)")
    }

    @Test func tilesThatAreNotWrittenCostNothing() throws {
        try expectNoUse(["tile", "plain", "4", "0", "15", "-o", "/dev/null"], status: 1, "a tile absent inside the zoom range")
        let full = try expectNoUse(["tile", "plain", "0", "0", "0", "-o", "/dev/full"], status: 74, "a full device")
        // Said as `export` says it (it was "write: the disk is full").
        #expect(full.stderr.contains("/dev/full: the disk is full"), "\(full.stderr)")
    }

    /// A FIFO that no process reads is waited for, as `echo > FIFO` would; stopping the wait with
    /// Ctrl-C gives the use back.
    @Test func aFIFOThatNobodyReadsIsWaitedForAndCtrlCCostsNothing() throws {
        let fifo = scratch + "/tile.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        if let user = Self.user { #expect(chown(fifo, user, user) == 0) }
        let before = try promptsShown()
        let waiting = try mapgate.start(["tile", "plain", "0", "0", "0", "-o", fifo], at: during)
        let deadline = Date().addingTimeInterval(20)
        while !waiting.stderr.contains("waiting for a process to read"), Date() < deadline { usleep(20_000) }
        #expect(waiting.stderr.contains("waiting for a process to read \(fifo)"), "\(waiting.stderr)")
        waiting.signal(SIGINT)
        #expect(waiting.wait() == 130, "\(waiting.stderr)")
        #expect(try promptsShown() == before)
    }

    /// A reader that takes nothing yet (its pipe full: a stalled consumer, `| ssh` on a slow link):
    /// no byte has gone out, so Ctrl-C, SIGTERM or SIGHUP give the use back at once. The first
    /// byte's write used to block inside the delivery, which a signal counts as delivered after
    /// 5 s: the use was kept for nothing.
    @Test(arguments: [(SIGINT, "tile"), (SIGTERM, "tile"), (SIGHUP, "tile"), (SIGINT, "export"), (SIGHUP, "export")])
    func aSignalWhileTheReaderTakesNothingCostsNothing(_ signal: Int32, _ command: String) throws {
        let fifo = scratch + "/full-\(signal)-\(command).fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        if let user = Self.user { #expect(chown(fifo, user, user) == 0) }
        // Holds the FIFO open for reading and never reads; another writer fills its 64 KiB.
        let reader = try BackgroundProcess("/bin/sh", ["-c", "exec 3<\"$0\"; sleep 60", fifo])
        defer { reader.signal(SIGKILL) }
        #expect(try runProcess("/bin/sh", ["-c", "head -c 65536 /dev/zero > \"$0\"", fifo]).status == 0)
        let before = try promptsShown()
        let arguments = command == "tile" ? ["tile", "plain", "0", "0", "0", "-o", fifo] : ["export", "plain", fifo]
        let writer = try mapgate.start(arguments, at: during)
        usleep(1_500_000)
        let sent = Date()
        writer.signal(signal)
        #expect(writer.wait() == 128 + signal, "\(writer.stderr)")
        #expect(Date().timeIntervalSince(sent) < 4, "the signal waited for a delivery that could not happen")
        #expect(try promptsShown() == before, "\(writer.stderr)")
    }

    /// A hostile reader: it takes the first bytes of a large tile from a FIFO, then closes its end
    /// (the write fails with EPIPE). Bytes that reached a reader are delivered: the use is counted,
    /// never given back for a tile the reader could take nearly whole.
    @Test func aReaderThatTakesPartOfALargeTileThenBreaksOffIsCharged() throws {
        // A region whose zoom-0 tile is large, published and synced as any other (an installed
        // file edited in place is damaged, and refused).
        let source = workspace.work.file("big.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), toPath: source)
        let grow = "UPDATE images SET tile_data = X'89504E470D0A1A0A' || randomblob(300000) WHERE tile_id = (SELECT tile_id FROM map WHERE zoom_level = 0)"
        #expect(try runProcess("/usr/bin/sqlite3", [source, grow]).status == 0)
        try workspace.builder.add(id: "big", source: source, format: "png")
        try workspace.builder.write()
        #expect(try mapgate.run(["sync", "big"], at: during).status == 0)
        let fifo = scratch + "/big.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        if let user = Self.user { #expect(chown(fifo, user, user) == 0) }
        let reader = try BackgroundProcess("/bin/sh", ["-c", "head -c 100 \"$0\" > /dev/null", fifo])
        let before = try promptsShown()
        let result = try mapgate.run(["tile", "big", "0", "0", "0", "-o", fifo], at: during)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(reader.wait() == 0)
        #expect(try promptsShown() == before + 1, "\(result.stderr)")
        // And says so: a run tried again costs another use.
        #expect(result.stderr.contains("(its use was counted: the first bytes had gone out)"), "\(result.stderr)")
    }

    @Test func aClosedStandardOutputCostsNothing() throws {
        let before = try promptsShown()
        // At the real time, which the gate reads as its latest (later) time: no faketime here, as
        // libfaketime itself opens a file that would take the closed descriptor's number.
        let (program, arguments) = mapgate.command(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" >&-", mapgate.path, "tile", "plain", "0", "0", "0", "-o", "-",
             "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
        let result = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write to standard output: it was closed when mapgate started"), "\(result.stderr)")
        #expect(try promptsShown() == before)
    }

    /// Standard output redirected to a file on a disk with room for a page but not for the whole
    /// tile or archive (found by an attack: the file held 4,096 bytes of it and a use was counted,
    /// where `-o` on the same disk cost nothing). The room is taken before the first byte: the run
    /// fails with the file as it was, and nothing is counted.
    @Test(.enabled(if: TinyDisk.canMount, "mounting a tmpfs needs root (CI runs as root)"), arguments: [["tile", "plain", "0", "0", "0"], ["export", "plain", "-"]])
    func aNearlyFullDiskBehindStandardOutputCostsNothing(_ command: [String]) throws {
        let disk = try TinyDisk(at: workspace.work.file("disk"))
        defer { disk.unmount() }
        try disk.make("full")
        chmod(disk.path, 0o1777)
        let filler = disk.path + "/filler"
        let filled = try #require(FileManager.default.attributesOfItem(atPath: filler)[.size] as? NSNumber).int64Value
        #expect(truncate(filler, off_t(filled - 4096)) == 0)  // one page free
        let output = disk.path + "/out"
        let before = try promptsShown()
        // At the real time, which the gate reads as its latest (later) time (as above).
        let (program, arguments) = mapgate.command(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" > \(output)", mapgate.path] + command + ["--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
        let result = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write to standard output: the disk is full"), "\(result.stderr)")
        #expect(try promptsShown() == before, "a use was counted: \(result.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber)?.intValue == 0, "the file holds part of it")
    }

    /// A file size limit (`ulimit -f`) the gate's own record cannot be written under: said as the
    /// limit it is (SQLite lost the reason and said "disk I/O error"; found by an attack), and
    /// nothing counted.
    @Test func aFileSizeLimitIsSaidAndCostsNothing() throws {
        let before = try promptsShown()
        let (program, arguments) = mapgate.command(
            ["/bin/bash", "-c", "ulimit -f 4 && exec \"$@\"", "limited", "/usr/bin/faketime", during, mapgate.path, "tile", "plain", "0", "0", "0", "-o", "/dev/null",
             "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
        let result = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("the file would be larger than this process may write (ulimit -f)"), "\(result.stderr)")
        #expect(try promptsShown() == before)
    }

    @Test func aDamagedRegionFileCostsNothing() throws {
        let path = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 8192)
        try handle.close()
        let before = try promptsShown()
        let result = try mapgate.run(["tile", "plain", "4", "0", "12", "-o", "/dev/null"], at: during)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(try promptsShown() == before)
    }

    @Test func aMissingRegionFileSaysSoAndCostsNothing() throws {
        try FileManager.default.removeItem(atPath: mapgate.dataDirectory + "/regions/plain.mbtiles")
        let before = try promptsShown()
        let result = try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: during)
        #expect(result.status == 74)
        #expect(result.stderr.contains("region plain: is installed but its file"), "\(result.stderr)")
        #expect(result.stderr.contains("is missing; 'mapgate sync plain' installs it again"), "\(result.stderr)")
        #expect(try promptsShown() == before)
    }

    /// Both copies read-only: the gate fails closed (no record, no use), and says which file and
    /// what to do instead of SQLite's words and SQL (issue 25, "Also").
    @Test func aReadOnlyStateFileFailsClosedWithAClearMessage() throws {
        let user = mapgate.stateHome + "/mapgate/state.sqlite"
        #expect(chmod(user, 0o444) == 0)
        defer { chmod(user, 0o644) }
        let result = try mapgate.run(["tile", "plain", "0", "0", "0", "-o", scratch + "/t.png"], at: during)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch + "/t.png"))
        #expect(result.stderr.contains("cannot write the update gate's state \(user): it is read-only"), "\(result.stderr)")
        #expect(result.stderr.contains("chmod u+w"), "\(result.stderr)")
        #expect(!result.stderr.contains("INSERT"), "\(result.stderr)")
    }

    @Test func syncsThatInstallNothingCostNothing() throws {
        try workspace.builder.add(
            id: "badhash", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png",
            overrides: ["sha256": String(repeating: "0", count: 64)])
        try workspace.builder.add(
            id: "cut", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png",
            overrides: ["url": "_fault/cut=2000/packages/cut-1.mbtiles.gz"])
        try workspace.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), version: "2", format: "png")
        try workspace.builder.write()
        try FileManager.default.removeItem(atPath: workspace.work.file("www/packages/plain-2.mbtiles.gz"))
        try expectNoUse(["sync", "badhash"], status: 65, "a package whose SHA-256 does not match")
        try expectNoUse(["sync", "cut"], status: 69, "a download cut short")
        try expectNoUse(["sync"], status: 69, "the publisher's package answers 404")
    }

    /// Stopped (Ctrl-C, SIGTERM) while its package stalls, before anything was installed: the
    /// signal handler gives the use back.
    @Test func aSyncStoppedBeforeItInstalledAnythingCostsNothing() throws {
        try workspace.builder.add(
            id: "slow", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png", gzip: false,
            overrides: ["url": "/_fault/cut=100000,stall=8/packages/slow-1.mbtiles"])
        try workspace.builder.write()
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "slow"], at: during)
        let deadline = Date().addingTimeInterval(20)
        while !sync.stderr.contains("uses left"), Date() < deadline { usleep(50_000) }
        usleep(500_000)
        sync.signal(SIGTERM)
        #expect(sync.wait(timeout: 20) == 143, "\(sync.stderr)")
        #expect(try promptsShown() == before, "\(sync.stderr)")
    }

    @Test func aDailySyncWhoseStyleAnswers404CostsNothing() throws {
        let style: [String: Any] = [
            "id": "streets", "name": "Streets", "version": "1", "url": "packages/streets-1.style.json.gz", "size": 100,
            "sha256": String(repeating: "a", count: 64), "installedSize": 100, "regions": ["plain"],
        ]
        try workspace.builder.write(extra: ["styles": [style]])
        for day in 0..<3 {
            let before = try promptsShown()
            let result = try mapgate.run(["sync"], at: "2027-02-0\(5 + day) 00:00:00")
            #expect(result.status == 69, "\(result.stderr)")
            #expect(result.stdout.contains("plain 1: up to date"), "\(result.stdout)")
            #expect(try promptsShown() == before, "day \(day): \(result.stderr)")
        }
    }

    @Test func aServerThatCannotStartCostsNothing() throws {
        let busy = try HTTPListener(host: "127.0.0.1", port: 0)
        try expectNoUse(["serve", "--port", String(busy.port)], status: 69, "a port already taken")
        let stubs = try LibraryStandIns.stubs(["libh2o-evloop.so.0.13"], in: workspace.work.file("stubs"))
        try expectNoUse(["serve", "--port", "0"], status: 69, standIns: stubs, "h2o, the server's library, cannot be loaded")
        withExtendedLifetime(busy) {}
    }

    @Test func aServerCountsItsUseOnceItAnsweredATile() throws {
        // Stopped before any tile was asked for: given back.
        var before = try promptsShown()
        let idle = try mapgate.start(["serve", "--port", "0"], at: during)
        _ = try #require(idle.firstLine(), "\(idle.stderr)")
        idle.signal(SIGTERM)
        #expect(idle.wait() == 0)
        #expect(try promptsShown() == before, "\(idle.stderr)")
        // A tile answered: kept.
        before = try promptsShown()
        let started = try mapgate.serve(at: during)
        let (server, base) = (started.process, started.base)
        #expect(try HTTPClient().get(HTTPRequest(url: base + "/plain/0/0/0.png")).status == 200)
        server.signal(SIGTERM)
        #expect(server.wait() == 0)
        #expect(try promptsShown() == before + 1, "\(server.stderr)")
    }

    /// mapgate-serve.service restarts a failed `serve` every 5 s unless it exits with one of
    /// RestartPreventExitStatus: a start that keeps failing must never spend the uses.
    @Test func theUnitsRestartPolicyNeverSpendsAUse() throws {
        let unit = try String(contentsOfFile: TestPaths.repository + "/packaging/mapgate-serve.service", encoding: .utf8)
        func value(_ key: String) -> String? {
            unit.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        #expect(value("Restart") == "on-failure")
        let prevent = Set((value("RestartPreventExitStatus") ?? "").split(separator: " ").compactMap { Int32($0) })
        let exec = try #require(value("ExecStart")).split(separator: " ").map(String.init)
        #expect(exec.first == "/usr/bin/mapgate")
        let busy = try HTTPListener(host: "127.0.0.1", port: 0)
        let before = try promptsShown()
        var restarts = 0
        // As systemd would run it (ExecStart's arguments), on a port that is taken.
        while restarts < 6 {
            let result = try mapgate.run(Array(exec.dropFirst()) + ["--port", String(busy.port)], at: during)
            #expect(result.status != 0)
            if prevent.contains(result.status) { break }
            restarts += 1
        }
        #expect(restarts == 6, "the unit stops restarting a start that fails with this exit status")
        #expect(try promptsShown() == before)
        withExtendedLifetime(busy) {}
    }
}
