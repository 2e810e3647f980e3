import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A run killed before it delivered anything (SIGKILL, the OOM killer, a power cut: nothing it
/// could handle) gets its reserved use back at the next run, as a run that ends on its own does
/// at its end (issue 40's random-kill figures: 7 undelivered uses were kept by killed syncs). A
/// run killed after it delivered keeps the use: the record is told before anything is handed
/// over. Run as an unprivileged user when the tests run as root.
@Suite struct KilledRunUseTests {
    static let user: uid_t? = geteuid() == 0 ? 65534 : nil
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    let during = "2027-02-05 00:00:00"

    init() throws {
        workspace = try CLIWorkspace.prompting(user: Self.user)
    }

    func promptsShown() throws -> Int { try workspace.promptsShown(at: during) }

    /// Whether `pid` is gone or a zombie.
    static func hasEnded(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }

    /// SIGKILLs `process` and the mapgate under its wrappers, and waits until none runs (a
    /// killed mapgate whose wrapper died with it may take a moment to go).
    func kill9(_ process: BackgroundProcess) {
        let pid = process.processIdentifier
        let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { pid_t($0) }
        process.signal(SIGKILL)
        _ = process.wait(timeout: 20)
        for child in children {
            #expect(waitUntil(timeout: 10) { Self.hasEnded(child) }, "process \(child) still runs")
        }
    }

    /// A region whose package download stalls after its first bytes.
    func addSlowRegion() throws {
        try workspace.builder.add(
            id: "slow", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png", gzip: false,
            overrides: ["url": "/_fault/cut=100000,stall=8/packages/slow-1.mbtiles"])
        try workspace.builder.write()
    }

    /// Offers `ids` made of the plain fixture, each package's download cut short after 2,000
    /// bytes, or (`whole`) as published: the network back.
    func offerCut(_ ids: String..., whole: Bool = false) throws {
        let source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        for id in ids {
            try workspace.builder.add(id: id, source: source, format: "png", overrides: whole ? [:] : ["url": "_fault/cut=2000/packages/\(id)-1.mbtiles.gz"])
        }
        try workspace.builder.write()
    }

    /// A run stopped (Ctrl-Z; here SIGSTOP) while it holds a reserved use (found by an attack: at
    /// the last use, a stopped run held it from everyone, for as long as it stayed stopped): the
    /// next run gives it back, and the stopped run's own end, once continued, gives nothing back
    /// twice.
    @Test func aStoppedRunHoldsNoUse() throws {
        try addSlowRegion()
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "slow"], at: during)
        #expect(waitUntil(timeout: 20) { sync.stderr.contains("uses left") }, "\(sync.stderr)")
        let pid = try sync.descendant(named: "mapgate")
        kill(pid, SIGSTOP)
        #expect(waitUntil { processIsStopped(pid) })
        #expect(try promptsShown() == before, "a stopped run kept its use: \(sync.stderr)")
        kill(pid, SIGCONT)
        sync.signal(SIGTERM)
        kill(pid, SIGTERM)
        #expect(sync.wait(timeout: 20) == 128 + SIGTERM, "\(sync.stderr)")
        #expect(try promptsShown() == before, "given back twice or kept: \(sync.stderr)")
    }

    /// A stopped run holding the data directory's lock (found by an attack: every other `sync` or
    /// `remove` waited its 30 s, then said only that the lock was held): said at once, naming the
    /// process and what to do; nothing is counted.
    @Test func aStoppedRunHoldingTheLockIsSaidAtOnce() throws {
        try addSlowRegion()
        let sync = try mapgate.start(["sync", "slow"], at: during)
        #expect(waitUntil(timeout: 20) { workspace.origin.requests.contains { $0.path.contains("packages/slow") } }, "\(sync.stderr)")
        let pid = try sync.descendant(named: "mapgate")
        kill(pid, SIGSTOP)
        #expect(waitUntil { processIsStopped(pid) })
        let started = Date()
        let remove = try mapgate.run(["remove", "plain"], at: during)
        #expect(remove.status == 75, "\(remove.stderr)")
        #expect(remove.stderr.contains("another mapgate (process \(pid)) is changing") && remove.stderr.contains("is stopped (Ctrl-Z)"), "\(remove.stderr)")
        #expect(Date().timeIntervalSince(started) < 15, "it waited for the lock's 30 s")
        kill(pid, SIGCONT)
        kill(pid, SIGTERM)
        #expect(sync.wait(timeout: 20) == 128 + SIGTERM, "\(sync.stderr)")
        #expect(try mapgate.run(["remove", "plain"], at: during).status == 0)
    }

    /// SIGKILL during a sync that has installed nothing: the next run gives the use back.
    @Test func aSyncKilledBeforeInstallingGetsItsUseBackAtTheNextRun() throws {
        try addSlowRegion()
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "slow"], at: during)
        #expect(waitUntil(timeout: 20) { sync.stderr.contains("uses left") }, "\(sync.stderr)")
        usleep(500_000)
        kill9(sync)
        #expect(!FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/regions/slow.mbtiles"))
        #expect(try promptsShown() == before, "a SIGKILLed sync that installed nothing kept its use: \(sync.stderr)")
    }

    /// Killed at each stage of an install (by the fault hook, as `kill -9` would): before the
    /// rename nothing is installed and the use comes back; after it the region is installed and
    /// the use is kept.
    @Test(arguments: [("downloading@1", false), ("validating", false), ("installing", false), ("recording", true), ("installed", true)])
    func aSyncKilledAtEachStageKeepsTheUseExactlyWhenItInstalled(_ stage: String, installs: Bool) throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let sync = try mapgate.run(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": stage])
        #expect(sync.status != 0, "\(stage): \(sync.stderr)")
        #expect(FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/regions/fresh.mbtiles") == installs, "\(stage)")
        let spent = try promptsShown() - before
        #expect(spent == (installs ? 1 : 0), "\(stage): uses spent \(spent); \(sync.stderr)")
    }

    /// Killed after the use's delivery and before the rename (a SIGKILL, a power cut, in the
    /// moment between the record's commit and the file going into place): the use is spent and
    /// nothing is installed, so the next `sync` puts the checked file that run left in place, with
    /// no download and no second use (found by an attack: the next run fetched the package again
    /// and charged another use), also after other uses came between (found by the attack on that
    /// fix: a tile looked at first made the update cost its use again). What the attack on it
    /// tried is not put in place, and that region is fetched again: a pending record that names
    /// another use, its file swapped for a link (it was renamed into `regions/`), and a pending
    /// record written by hand for a region the signed catalog does not offer (it was installed, a
    /// text file under its name), and the checked file put in `regions/` by hand with its pending
    /// record (taken for the new version before pending records were sealed). Fetched on the use
    /// the killed run paid (``UnfinishedRun``: it paid for the region, which it did not install),
    /// once: the region is installed once for the one use.
    @Test(arguments: ["honest", "tileBetween", "forgedPaidBy", "link", "notInCatalog", "byHand"])
    func aSyncKilledBetweenItsDeliveryAndTheRenameIsFinishedWithoutAnotherUse(_ variant: String) throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let killed = try mapgate.run(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "delivered"])
        #expect(killed.status != 0, "\(killed.stderr)")
        let regions = mapgate.dataDirectory + "/regions"
        #expect(!FileManager.default.fileExists(atPath: regions + "/fresh.mbtiles"))
        #expect(try promptsShown() - before == 1, "the delivery was not told first: \(killed.stderr)")
        let pending = regions + "/.fresh.pending.json"
        let sealed = try MapGateBinary.json(String(decoding: try #require(FileManager.default.contents(atPath: pending)), as: UTF8.self))
        var entry = try MapGateBinary.json(try #require(sealed["entry"] as? String))
        let checked = try #require(entry["file"] as? String)
        /// Writes `entry` as the pending record at `path`, under the seal of the run's own record
        /// or under `seal`.
        func write(_ entry: [String: Any], to path: String, seal: String? = nil) throws {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: entry, options: .sortedKeys), as: UTF8.self)
            try JSONSerialization.data(withJSONObject: ["entry": text, "seal": seal ?? sealed["seal"] as Any]).write(to: URL(fileURLWithPath: path))
        }
        var spent = 1
        switch variant {
        case "tileBetween":
            #expect(try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: during).status == 0)
            spent += 1
        case "forgedPaidBy":
            entry["paidBy"] = "0123456789abcdef"
            try write(entry, to: pending)
        case "link":
            let elsewhere = workspace.work.file("elsewhere.mbtiles")
            try FileManager.default.moveItem(atPath: checked, toPath: elsewhere)
            try FileManager.default.createSymbolicLink(atPath: checked, withDestinationPath: elsewhere)
        case "notInCatalog":
            var record = try #require(entry["record"] as? [String: Any])
            record["id"] = "secret"
            let file = checked.replacingOccurrences(of: "/fresh.", with: "/secret.")
            try FileManager.default.copyItem(atPath: checked, toPath: file)
            try write(["record": record, "file": file, "paidBy": entry["paidBy"] as Any], to: regions + "/.secret.pending.json")
        case "byHand":
            // As a user would who fetched the package by hand: the record is the run's, its seal
            // one the user cannot make.
            try FileManager.default.copyItem(atPath: checked, toPath: regions + "/fresh.mbtiles")
            try write(entry, to: pending, seal: String(repeating: "0", count: 64))
            #expect(!(try mapgate.run(["list"], at: during).stdout.contains("fresh")), "a pending record written by hand was believed")
            try FileManager.default.removeItem(atPath: regions + "/fresh.mbtiles")
        default:
            break
        }
        let finished = ["honest", "tileBetween", "notInCatalog"].contains(variant)
        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync", "fresh"], at: during)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try mapgate.run(["verify", "fresh"], at: during).status == 0)
        let fetched = workspace.origin.requests.contains { $0.path.contains("packages/fresh") }
        #expect(fetched != finished, "\(workspace.origin.requests.map(\.path))")
        #expect(try promptsShown() - before == spent, "\(again.stdout)\(again.stderr)")
        // Paid for once: put aside and fetched again, it costs a use.
        #expect(try mapgate.run(["remove", "fresh"], at: during).status == 0)
        #expect(try mapgate.run(["sync", "fresh"], at: during).status == 0)
        #expect(try promptsShown() - before == spent + 1)
        var info = stat()
        #expect(lstat(regions + "/fresh.mbtiles", &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "not a regular file")
        #expect(!FileManager.default.fileExists(atPath: regions + "/secret.mbtiles"))
        #expect(!(try mapgate.run(["list"], at: during).stdout.contains("secret")))
    }

    /// A run whose use paid for regions it could not install (the network cut one's download)
    /// leaves them paid for: `sync` of those regions, once the network is back, installs them
    /// without another use, once (found by an attack: `sync fresh cut` with cut's download cut
    /// cost a use, and `sync cut` a second). What names the run's use is renewed at each `sync`,
    /// so a copy of it put back pays for nothing, and one edited by hand is not believed.
    @Test func regionsARunPaidForAndDidNotInstallCostNoSecondUse() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try offerCut("cut", "other")
        let before = try promptsShown()
        let first = try mapgate.run(["sync", "fresh", "cut", "other"], at: during)
        #expect(first.status == 69, "\(first.stderr)")
        let regions = mapgate.dataDirectory + "/regions"
        #expect(FileManager.default.fileExists(atPath: regions + "/fresh.mbtiles"))
        #expect(try promptsShown() - before == 1)
        let record = regions + "/.unfinished-run.json"
        let copy = workspace.work.file("unfinished-copy.json")
        try FileManager.default.copyItem(atPath: record, toPath: copy)
        try offerCut("cut", "other", whole: true)  // the network back
        // Edited by hand (another region added under the run's seal): not believed, and the
        // region it names costs a use as any.
        let sealed = try MapGateBinary.json(String(decoding: try #require(FileManager.default.contents(atPath: record)), as: UTF8.self))
        let entry = try #require(sealed["entry"] as? String).replacingOccurrences(of: "\"cut\"", with: "\"cut\",\"plain\"")
        try JSONSerialization.data(withJSONObject: ["entry": entry, "seal": sealed["seal"] as Any]).write(to: URL(fileURLWithPath: record))
        #expect(try mapgate.run(["remove", "plain"], at: during).status == 0)
        #expect(try mapgate.run(["sync", "plain"], at: during).status == 0)
        #expect(try promptsShown() - before == 2)
        // (That run's own record, paid and done, is gone.)
        #expect(!FileManager.default.fileExists(atPath: record))
        try FileManager.default.copyItem(atPath: copy, toPath: record)
        // The regions the first run paid for: no use, and it says so.
        let second = try mapgate.run(["sync", "cut"], at: during)
        #expect(second.status == 0 && second.stderr.contains("no use counted"), "\(second.stderr)")
        #expect(try promptsShown() - before == 2)
        let third = try mapgate.run(["sync", "fresh", "cut", "other"], at: during)
        #expect(third.status == 0 && third.stderr.contains("no use counted"), "\(third.stderr)")
        #expect(try promptsShown() - before == 2)
        #expect(!FileManager.default.fileExists(atPath: record))
        for name in ["fresh", "cut", "other"] { #expect(try mapgate.run(["verify", name], at: during).status == 0) }
        // Paid for once: removed and fetched again, a use; the first run's record put back pays
        // for nothing (its use was renewed, then retired).
        #expect(try mapgate.run(["remove", "cut"], at: during).status == 0)
        try FileManager.default.copyItem(atPath: copy, toPath: record)
        let again = try mapgate.run(["sync", "cut"], at: during)
        #expect(again.status == 0 && !again.stderr.contains("no use counted"), "\(again.stderr)")
        #expect(try promptsShown() - before == 3)
    }

    /// The data directory's `state.sqlite` found damaged (a disk error, a power cut on a card):
    /// moved aside and made afresh, it costs nothing (the user's copy holds the gate's record) and
    /// loses nothing (found by an attack: the gate recovered and closed with uses left, `list` said
    /// nothing was installed, and `sync` fetched the region again for a use). `sync` records the
    /// installed file again when it is the catalog's version; another file is fetched as any.
    @Test func aDamagedDataDirectoryStateCostsAndLosesNothing() throws {
        // A catalog that names each version's tiles (`contentHash`), as `mapgate publish` writes.
        let source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try workspace.builder.add(id: "plain", source: source, format: "png", overrides: ["contentHash": try TilesetHash.compute(ofFileAt: source).hex])
        try workspace.builder.write()
        let before = try promptsShown()
        let state = mapgate.dataDirectory + "/state.sqlite"
        func damage() throws {
            for side in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: state + side) }
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: state))
        }
        try damage()
        let status = try MapGateBinary.json(try mapgate.run(["status", "--json"], at: during).stdout)
        #expect(status["recovering"] as? Bool != true, "\(status)")
        #expect(try promptsShown() == before)
        workspace.origin.clearRequests()
        let sync = try mapgate.run(["sync", "plain"], at: during)
        #expect(sync.status == 0 && sync.stderr.contains("was recorded again"), "\(sync.stderr)|\(sync.stdout)|\(status)")
        #expect(!workspace.origin.requests.contains { $0.path.contains("packages/plain") }, "\(workspace.origin.requests.map(\.path))")
        #expect(try promptsShown() == before)
        #expect(try mapgate.run(["verify", "plain"], at: during).status == 0)
        #expect(try mapgate.run(["list"], at: during).stdout.contains("plain"))
        // Another file under its name is not taken back: fetched and paid for as any. (Damaged
        // again within the same second of the clock: moved aside under another name.)
        try damage()
        let regionFile = mapgate.dataDirectory + "/regions/plain.mbtiles"
        try FileManager.default.removeItem(atPath: regionFile)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), toPath: regionFile)
        workspace.origin.clearRequests()
        let other = try mapgate.run(["sync", "plain"], at: during)
        #expect(other.status == 0 && !other.stderr.contains("was recorded again"), "\(other.stderr)")
        #expect(workspace.origin.requests.contains { $0.path.contains("packages/plain") })
        #expect(try promptsShown() == before + 1)
        #expect(try mapgate.run(["verify", "plain"], at: during).status == 0)
    }

    /// The attack on the regions a run paid for (2026-12-06): a later run stopped before it
    /// installed anything leaves them paid for (they were lost); a later run that names other
    /// regions takes them over with its use, and the earlier use, renewed while that run read the
    /// file, pays for nothing more (a copy taken then paid for an update later); a region whose
    /// package answered 404 before the use is paid for by it too.
    @Test func regionsARunPaidForSurviveLaterRunsAndPayOnce() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.offer("other", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try workspace.builder.add(id: "gone", source: source, format: "png", overrides: ["url": "_fault/status=404/packages/gone-1.mbtiles.gz"])
        try offerCut("cut")
        try addSlowRegion()
        let before = try promptsShown()
        let first = try mapgate.run(["sync", "fresh", "cut", "gone"], at: during)
        #expect(first.status == 69, "\(first.stderr)")
        #expect(try promptsShown() - before == 1)
        // Stopped before it installed anything: nothing counted, nothing lost.
        let stopped = try mapgate.start(["sync", "slow"], at: during)
        #expect(waitUntil(timeout: 10) { workspace.origin.requests.contains { $0.path.contains("slow-1") } })
        kill(try stopped.descendant(named: "mapgate"), SIGINT)
        #expect(stopped.wait(timeout: 30) == 130, "\(stopped.stderr)")
        #expect(try promptsShown() - before == 1)
        // Another region: paid as any; the file copied while that run stands at its delivery.
        let record = mapgate.dataDirectory + "/regions/.unfinished-run.json"
        let copy = workspace.work.file("unfinished-during.json")
        let other = try mapgate.start(["sync", "other"], at: during, environment: ["MAPGATE_FAULT_STOP_AT": "delivered"])
        let pid = try other.descendant(named: "mapgate")
        #expect(waitUntil { processIsStopped(pid) })
        try FileManager.default.copyItem(atPath: record, toPath: copy)
        kill(pid, SIGCONT)
        #expect(other.wait(timeout: 30) == 0, "\(other.stderr)")
        #expect(try promptsShown() - before == 2)
        // The publisher's packages back: the first run's regions, on its use.
        try offerCut("cut", "gone", whole: true)
        let finished = try mapgate.run(["sync", "cut", "gone"], at: during)
        #expect(finished.status == 0 && finished.stderr.contains("no use counted"), "\(finished.stderr)")
        #expect(try promptsShown() - before == 2)
        // The copy names a use taken over since: it pays for nothing.
        #expect(try mapgate.run(["remove", "cut"], at: during).status == 0)
        try? FileManager.default.removeItem(atPath: record)
        try FileManager.default.copyItem(atPath: copy, toPath: record)
        let again = try mapgate.run(["sync", "cut"], at: during)
        #expect(again.status == 0 && !again.stderr.contains("no use counted"), "\(again.stderr)")
        #expect(try promptsShown() - before == 3)
    }

    /// The second attack on the regions a run paid for (2026-12-06): the file copied into another
    /// data directory (which shares the user's gate) let a run there in on the use too; a region
    /// listed while it was installed was updated for nothing once a newer version came out; a run
    /// killed at its first install's delivery left its other regions to be paid for again.
    @Test func regionsARunPaidForAreThisDirectorysAtTheirVersion() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.offer("other", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try offerCut("cut")
        let before = try promptsShown()
        #expect(try mapgate.run(["sync", "fresh", "cut"], at: during).status == 69)
        #expect(try promptsShown() - before == 1)
        try offerCut("cut", whole: true)
        // Another data directory of the same user, the file copied there: paid as any.
        let elsewhere = try #require(mapgate.userFolder) + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere + "/regions", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: mapgate.dataDirectory + "/regions/.unfinished-run.json", toPath: elsewhere + "/regions/.unfinished-run.json")
        if let user = mapgate.user { _ = try runProcess("/bin/chown", ["-R", "\(user):\(user)", elsewhere]) }
        let (program, arguments) = mapgate.command(["/usr/bin/faketime", during, mapgate.path, "sync", "cut", "--config", mapgate.configPath, "--data-dir", elsewhere])
        let there = try runProcess(program, arguments, environment: mapgate.baseEnvironment)
        #expect(there.status == 0 && !there.stderr.contains("no use counted"), "\(there.stderr)|\(there.stdout)")
        #expect(try promptsShown() - before == 2)
        // Here, on the first run's use.
        let here = try mapgate.run(["sync", "cut"], at: during)
        #expect(here.status == 0 && here.stderr.contains("no use counted"), "\(here.stderr)")
        #expect(try promptsShown() - before == 2)
        // A region listed while installed (its file put aside, its package gone): at its
        // version only; the next version costs a use.
        let regionFile = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let aside = workspace.work.file("plain-aside.mbtiles")
        try FileManager.default.moveItem(atPath: regionFile, toPath: aside)
        try workspace.builder.add(id: "plain", source: source, format: "png", overrides: ["url": "_fault/status=404/packages/plain-1.mbtiles.gz"])
        try workspace.builder.write()
        #expect(try mapgate.run(["sync", "other", "plain"], at: during).status != 0)
        #expect(try promptsShown() - before == 3)
        try FileManager.default.moveItem(atPath: aside, toPath: regionFile)
        try workspace.builder.add(id: "plain", source: source, version: "2", format: "png")
        try workspace.builder.write()
        let update = try mapgate.run(["sync", "plain"], at: during)
        #expect(update.status == 0 && !update.stderr.contains("no use counted"), "\(update.stderr)")
        #expect(try promptsShown() - before == 4)
    }

    /// Killed at its first install's delivery: that install is finished, and its other regions
    /// are paid for, by the next runs.
    @Test func aRunKilledAtItsFirstDeliveryLeavesItsOtherRegionsPaidFor() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.offer("other", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let killed = try mapgate.run(["sync", "fresh", "other"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "delivered"])
        #expect(killed.status != 0)
        #expect(try promptsShown() - before == 1)
        let rest = try mapgate.run(["sync", "fresh", "other"], at: during)
        #expect(rest.status == 0 && rest.stderr.contains("no use counted"), "\(rest.stderr)")
        #expect(try promptsShown() - before == 1)
        for name in ["fresh", "other"] { #expect(try mapgate.run(["verify", name], at: during).status == 0) }
    }

    /// The uses the gate's record lists as the last delivered (the data directory's copy).
    func lastDelivered() throws -> Set<String> {
        let query = try runProcess("/usr/bin/sqlite3", [mapgate.dataDirectory + "/state.sqlite", "SELECT reservations FROM gate_deliveries"])
        return Set(try JSONSerialization.jsonObject(with: Data(query.stdout.utf8)) as? [String] ?? [])
    }

    /// A region the earlier run paid for found in place (its install killed once it was): the
    /// run that finds it so retires the earlier use, renewed as it began, so that nothing names
    /// a use that pays (found by an attack: a copy taken during that run installed it again).
    @Test func anEarlierUseWithNothingLeftToPayIsRetired() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try offerCut("cut")
        #expect(try mapgate.run(["sync", "fresh", "cut"], at: during).status == 69)
        try offerCut("cut", whole: true)
        let killed = try mapgate.run(["sync", "cut"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "installed"])
        #expect(killed.status != 0)
        let record = mapgate.dataDirectory + "/regions/.unfinished-run.json"
        #expect(FileManager.default.fileExists(atPath: record))
        let delivered = try lastDelivered()
        #expect(!delivered.isEmpty)
        let upToDate = try mapgate.run(["sync", "cut"], at: during)
        #expect(upToDate.status == 0, "\(upToDate.stderr)")
        #expect(!FileManager.default.fileExists(atPath: record))
        let after = try lastDelivered()
        #expect(after.isSubset(of: delivered) && after.count == delivered.count - 1, "before \(delivered), after \(after)")
    }

    /// Ctrl-C while the second region downloads, the first installed: the second is paid for.
    @Test func aRegionARunWasStoppedBeforeCostsNoSecondUse() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try addSlowRegion()
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "fresh", "slow"], at: during)
        let regions = mapgate.dataDirectory + "/regions"
        #expect(waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: regions + "/fresh.mbtiles") })
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/partial") && workspace.origin.requests.contains { $0.path.contains("slow-1") } })
        let pid = try sync.descendant(named: "mapgate")
        kill(pid, SIGINT)
        #expect(sync.wait(timeout: 30) == 130, "\(sync.stderr)")
        #expect(try promptsShown() - before == 1)
        try workspace.builder.add(id: "slow", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png", gzip: false)
        try workspace.builder.write()
        let resumed = try mapgate.run(["sync", "fresh", "slow"], at: during)
        #expect(resumed.status == 0 && resumed.stderr.contains("no use counted"), "\(resumed.stderr)")
        #expect(try promptsShown() - before == 1)
    }

    /// The use that paid for a killed run's install pays for its finishing once: the pending
    /// record and its checked file, copied aside before the next run finished them and put back
    /// after a `remove`, do not install the region again without a use (found by a review of the
    /// finishing: the use stayed among the gate's last delivered, which is all it looked at).
    @Test func aFinishedInstallCopiedAsideAndPutBackCostsAUse() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let killed = try mapgate.run(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "delivered"])
        #expect(killed.status != 0, "\(killed.stderr)")
        let copies = try PendingCopies(of: "fresh", in: mapgate.dataDirectory, aside: workspace.work.file("aside"))
        let finished = try mapgate.run(["sync", "fresh"], at: during)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try promptsShown() - before == 1, "the finishing cost a use: \(finished.stderr)")

        #expect(try mapgate.run(["remove", "fresh"], at: during).status == 0)
        try copies.putBack()
        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync", "fresh"], at: during)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(workspace.origin.requests.contains { $0.path.contains("packages/fresh") }, "installed again from the copies put back")
        #expect(try promptsShown() - before == 2, "installed again without a use: \(again.stdout)\(again.stderr)")
    }

    /// `remove` of a region whose install was killed between its delivery and the rename removes
    /// the pending record with the checked file (found by an attack: the record stayed, naming a
    /// file that was gone, until a later `sync` of the region; with the gate closed by that very
    /// use, until the app was updated).
    @Test func removingAKilledInstallRemovesItsPendingRecord() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let killed = try mapgate.run(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "delivered"])
        #expect(killed.status != 0, "\(killed.stderr)")
        let pending = mapgate.dataDirectory + "/regions/.fresh.pending.json"
        #expect(FileManager.default.fileExists(atPath: pending))
        let removed = try mapgate.run(["remove", "fresh"], at: during)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: pending), "the pending record stayed: \(removed.stdout)")
        let partial = try FileManager.default.contentsOfDirectory(atPath: mapgate.dataDirectory + "/partial").filter { $0.hasPrefix("fresh.") }
        #expect(partial.isEmpty, "\(partial)")
    }

    /// The use a pending record names is taken out of the last delivered before its install is
    /// finished: with the gate's record held locked at that moment (here by sqlite3, after the run
    /// got past its first look at the gate), nothing is finished and the pending record stays for
    /// the next run, which finishes it without a use (found by the attack on the fix above: the
    /// taking out was let fail, and the record and file copied aside were finished a second time).
    @Test func aFinishingWhoseUseCannotBeTakenOutFinishesNothing() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let killed = try mapgate.run(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_KILL_AT": "delivered"])
        #expect(killed.status != 0, "\(killed.stderr)")
        let pending = mapgate.dataDirectory + "/regions/.fresh.pending.json"
        #expect(FileManager.default.fileExists(atPath: pending))
        // The data directory's lock held for 2 s, so the sync waits there after its look at the
        // gate; the record is held locked from 1 s on, for longer than a run waits for it.
        let directoryLock = try BackgroundProcess("/usr/bin/flock", [mapgate.dataDirectory + "/lock", "sleep", "2"])
        usleep(300_000)
        let sync = try mapgate.start(["sync", "fresh"], at: during)
        usleep(1_000_000)
        let holder = try BackgroundProcess("/usr/bin/sqlite3", [mapgate.stateHome + "/mapgate/state.sqlite", "BEGIN IMMEDIATE;", ".shell sleep 14", "ROLLBACK;"])
        #expect(sync.wait(timeout: 60) != 0, "\(sync.stderr)")
        #expect(directoryLock.wait(timeout: 10) == 0)
        #expect(holder.wait(timeout: 30) == 0)
        #expect(FileManager.default.fileExists(atPath: pending), "the pending record went with nothing finished: \(sync.stderr)")
        #expect(!FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/regions/fresh.mbtiles"))
        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync", "fresh"], at: during)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!workspace.origin.requests.contains { $0.path.contains("packages/fresh") }, "\(workspace.origin.requests.map(\.path))")
        #expect(try promptsShown() - before == 1, "\(again.stdout)\(again.stderr)")
    }

    /// A use told delivered whose rename then failed (here a folder put where the region goes)
    /// is given back, and pays for no finishing either: the pending record and checked file,
    /// copied while the run stood between the delivery and the rename, put back afterwards, are
    /// fetched and paid for as any (found by an attack: the region was installed with no use ever
    /// counted).
    @Test func aUseGivenBackAfterAFailedRenamePaysForNoFinishing() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_STOP_AT": "delivered"])
        let pid = try sync.descendant(named: "mapgate")
        #expect(waitUntil { processIsStopped(pid) })
        let regions = mapgate.dataDirectory + "/regions"
        let copies = try PendingCopies(of: "fresh", in: mapgate.dataDirectory, aside: workspace.work.file("aside"))
        try FileManager.default.createDirectory(atPath: regions + "/fresh.mbtiles/in-the-way", withIntermediateDirectories: true)
        kill(pid, SIGCONT)
        #expect(sync.wait(timeout: 30) != 0, "\(sync.stderr)")
        #expect(try promptsShown() == before, "the failed install kept its use: \(sync.stderr)")
        try FileManager.default.removeItem(atPath: regions + "/fresh.mbtiles")
        try copies.putBack()
        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync", "fresh"], at: during)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(workspace.origin.requests.contains { $0.path.contains("packages/fresh") }, "installed from the copies put back")
        #expect(try promptsShown() - before == 1, "installed without a use: \(again.stdout)\(again.stderr)")
    }

    /// Copies, taken while a run stands at its delivery (here stopped there), of the pending
    /// record and checked file of an install that then completes: put back after a `remove`, they
    /// are fetched and paid for as any (found by an attack: a run that ended well left its use
    /// among the last delivered, and the copies were finished as paid). With a second region
    /// killed after its own delivery in the same run, the use pays for one finishing only (found
    /// by the same attack: both were finished on one use).
    @Test(arguments: [false, true])
    func copiesOfACompletedInstallArePaidFor(withAKilledSecondRegion: Bool) throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.offer("other", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let names = withAKilledSecondRegion ? ["fresh", "other"] : ["fresh"]
        let sync = try mapgate.start(["sync"] + names, at: during, environment: ["MAPGATE_FAULT_STOP_AT": "delivered"])
        let pid = try sync.descendant(named: "mapgate")
        #expect(waitUntil { processIsStopped(pid) })
        let regions = mapgate.dataDirectory + "/regions"
        let copies = try PendingCopies(of: "fresh", in: mapgate.dataDirectory, aside: workspace.work.file("aside"))
        kill(pid, SIGCONT)
        if withAKilledSecondRegion {
            // Stopped again at the second region's delivery: killed there.
            #expect(waitUntil { processIsStopped(pid) && FileManager.default.fileExists(atPath: regions + "/.other.pending.json") })
            kill(pid, SIGKILL)
            _ = sync.wait(timeout: 30)
        } else {
            #expect(sync.wait(timeout: 30) == 0, "\(sync.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: regions + "/fresh.mbtiles"))
        #expect(try promptsShown() - before == 1)
        #expect(try mapgate.run(["remove", "fresh"], at: during).status == 0)
        try copies.putBack()
        workspace.origin.clearRequests()
        let again = try mapgate.run(["sync"] + names, at: during)
        #expect(again.status == 0, "\(again.stderr)")
        let fetched = Set(workspace.origin.requests.compactMap { request in names.first { request.path.contains("packages/\($0)") } })
        #expect(fetched.count == 1, "\(workspace.origin.requests.map(\.path))")
        #expect(try promptsShown() - before == 2, "installed again without a use: \(again.stdout)\(again.stderr)")
        for name in names { #expect(try mapgate.run(["verify", name], at: during).status == 0) }
    }

    /// A signal while the rename after the delivery stalls longer than the give-back waits for it
    /// (7 s, a disk that stalls): the checked file is left for the rename, which the run waits
    /// for, so the region is installed and said, on the one use (found by an attack: the file was
    /// removed at once, the use counted as delivered, and nothing installed; the next sync paid
    /// again).
    @Test func aSignalDuringAStalledRenameLeavesItsFileToBePutInPlace() throws {
        try workspace.offer("fresh", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let before = try promptsShown()
        let slow = try PreloadLibrary.compileSlowRename(in: workspace.work.path, suffix: ".installing.mbtiles", seconds: 7)
        let sync = try mapgate.start(["sync", "fresh"], at: during, environment: ["MAPGATE_FAULT_STOP_AT": "delivered", "LD_PRELOAD": slow])
        let pid = try sync.descendant(named: "mapgate")
        #expect(waitUntil { processIsStopped(pid) })
        kill(pid, SIGCONT)
        usleep(500_000)
        kill(pid, SIGTERM)
        _ = sync.wait(timeout: 40)
        #expect(sync.stdout.contains("fresh 1: installed"), "\(sync.stdout)\(sync.stderr)")
        #expect(try promptsShown() - before == 1, "\(sync.stderr)")
        #expect(try mapgate.run(["verify", "fresh"], at: during).status == 0)
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: mapgate.dataDirectory + "/partial")) ?? []
        #expect(!partial.contains { $0.hasPrefix("fresh.installing") }, "\(partial)")
    }

    /// A server killed before answering a tile gets its use back; one killed after answering a
    /// GET keeps it (the record was told before the tile went out).
    @Test func aServerKilledKeepsItsUseExactlyWhenItAnsweredATile() throws {
        let before = try promptsShown()
        let idle = try mapgate.serve(at: during)
        kill9(idle.process)
        #expect(try promptsShown() == before, "a server killed before any tile kept its use: \(idle.process.stderr)")

        let serving = try mapgate.serve(at: during)
        let get = try runProcess("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", serving.base + "/plain/0/0/0.png"])
        #expect(get.stdout == "200", "\(get.stdout) \(get.stderr)")
        kill9(serving.process)
        #expect(try promptsShown() == before + 1, "a server killed after answering a tile gave its use back: \(serving.process.stderr)")
    }

    /// `tile` stopped just before it writes (where it would be killed by the OOM killer) and
    /// killed: no tile, and the use comes back.
    @Test func aTileKilledBeforeWritingGetsItsUseBack() throws {
        let output = (mapgate.userFolder ?? workspace.work.path) + "/t.png"
        let before = try promptsShown()
        let tile = try mapgate.start(["tile", "plain", "0", "0", "0", "-o", output], at: during, environment: ["MAPGATE_FAULT_STOP_AT": "delivering"])
        #expect(waitUntil(timeout: 20) { tile.stderr.contains("uses left") }, "\(tile.stderr)")
        usleep(300_000)
        kill9(tile)
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try promptsShown() == before, "\(tile.stderr)")
    }

    /// A run still going is not taken for a killed one: a second command while a sync waits on
    /// its download gives nothing back, and the sync's own end does (it installed nothing).
    @Test func aRunStillGoingKeepsItsReservation() throws {
        try addSlowRegion()
        let before = try promptsShown()
        let sync = try mapgate.start(["sync", "slow"], at: during)
        #expect(waitUntil(timeout: 20) { sync.stderr.contains("uses left") }, "\(sync.stderr)")
        #expect(try promptsShown() == before + 1, "the reservation of a running sync was given back: \(sync.stderr)")
        sync.signal(SIGTERM)
        #expect(sync.wait(timeout: 20) == 128 + SIGTERM, "\(sync.stderr)")
        #expect(try promptsShown() == before)
    }
}

/// Copies of a region's pending install record and the checked file it names, taken as a user
/// could (between a run's delivery and its rename), to be put back later.
struct PendingCopies {
    let pending: String
    let checked: String
    let aside: String

    init(of id: String, in dataDirectory: String, aside: String) throws {
        pending = dataDirectory + "/regions/.\(id).pending.json"
        let sealed = try MapGateBinary.json(String(decoding: try #require(FileManager.default.contents(atPath: pending)), as: UTF8.self))
        let entry = try MapGateBinary.json(try #require(sealed["entry"] as? String))
        checked = try #require(entry["file"] as? String)
        self.aside = aside
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: pending, toPath: aside + "/pending.json")
        try FileManager.default.copyItem(atPath: checked, toPath: aside + "/checked.mbtiles")
    }

    /// Puts both back where they were, over whatever is there now.
    func putBack() throws {
        for (copy, original) in [(aside + "/pending.json", pending), (aside + "/checked.mbtiles", checked)] {
            try? FileManager.default.removeItem(atPath: original)
            try FileManager.default.copyItem(atPath: copy, toPath: original)
        }
    }
}
