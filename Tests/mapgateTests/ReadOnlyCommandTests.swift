import Foundation
import MapGate
import TestSupport
import Testing

/// Commands that only read the data directory never create it, and their words fit the count.
@Suite struct ReadOnlyCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    @Test func listAndVerifyOfAMistypedDataDirectoryCreateNothing() throws {
        let typo = workspace.work.file("no/such/dtaa")
        let list = try mapgate.runBare(["list", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("the data directory \(typo) does not exist: no region is installed"), "\(list.stdout)")
        let json = try mapgate.runBare(["list", "--json", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(json.status == 0 && json.stdout.isEmpty, "\(json.stdout)")
        let verify = try mapgate.runBare(["verify", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(verify.status == 0, "\(verify.stderr)")
        let named = try mapgate.runBare(["verify", "x", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(named.status != 0 && named.stderr.contains("region x: not installed (the data directory"), "\(named.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.work.file("no")))
    }

    /// `status`, `check` and `catalog` made the mistyped folder (found by an attack): the gate
    /// keeps its copy in the state folder alone until a command installs something.
    @Test func gateCommandsOfAMistypedDataDirectoryCreateNothing() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        let typo = workspace.work.file("no/such/dtaa")
        for command in [["status"], ["check"], ["catalog"], ["status", "--json"]] {
            let result = try mapgate.runBare(command + ["--config", mapgate.configPath, "--data-dir", typo])
            #expect(result.status != 64, "\(command): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: workspace.work.file("no")), "\(command) made the folder")
        }
        // A sync makes it, and the gate's copy follows.
        #expect(try mapgate.runBare(["sync", "geo", "--config", mapgate.configPath, "--data-dir", typo]).status == 0)
        #expect(try mapgate.runBare(["status", "--config", mapgate.configPath, "--data-dir", typo]).status == 0)
        #expect(FileManager.default.fileExists(atPath: typo + "/state.sqlite"))
    }

    @Test func oneRegionIsOneRegion() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        let catalog = try mapgate.run(["catalog"])
        #expect(catalog.status == 0, "\(catalog.stderr)")
        #expect(catalog.stdout.contains("Test Maps: 1 region,"), "\(catalog.stdout)")
    }

    /// Issue 26 item 2: `list`, `verify` and `catalog` left `state.sqlite-shm` and
    /// `state.sqlite-wal` in the data directory. They create nothing there, and `list` and
    /// `verify` change nothing (`catalog` keeps the highest catalog serial in the gate's record).
    @Test func readingCommandsCreateAndChangeNothing() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let data = mapgate.dataDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
        let state = try Data(contentsOf: URL(fileURLWithPath: data + "/state.sqlite"))
        for command in [["list"], ["verify"], ["list", "--json"], ["catalog"]] {
            let result = try mapgate.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: data).sorted() == names, "after \(command)")
            if command[0] != "catalog" {
                #expect(try Data(contentsOf: URL(fileURLWithPath: data + "/state.sqlite")) == state, "\(command) changed state.sqlite")
            }
        }
    }

    /// A writer killed in the middle of a change leaves a hot journal beside the state database
    /// (`HotJournalTests`). The owner's reading commands undo it; another user's, who may not
    /// write there, are refused with the reason and what to do, instead of reading the killed
    /// writer's half-written pages as they stand.
    @Test(.enabled(if: geteuid() == 0, "needs root to run as nobody"))
    func anUnfinishedChangeOnlyItsOwnerCanUndoIsSaid() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        let data = mapgate.dataDirectory
        let state = data + "/state.sqlite"
        #expect(try KilledWriter.leaveUnfinishedChange(in: state) && FileManager.default.fileExists(atPath: state + "-journal"))
        // The workspace's folders only, never above it (/tmp stays as it is).
        var folder = data
        while folder.hasPrefix(workspace.work.path) {
            chmod(folder, 0o755)
            folder = PathText.deletingLastComponent(folder)
        }
        let home = workspace.work.file("nobody-home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        chown(home, 65534, 65534)
        chmod(mapgate.configPath, 0o644)
        let other = try runProcess(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", mapgate.path, "list", "--data-dir", data, "--config", mapgate.configPath],
            environment: ["HOME": home, "XDG_STATE_HOME": home + "/state", "NO_COLOR": "1"])
        #expect(other.status == 74, "\(other.status) \(other.stdout) \(other.stderr)")
        #expect(other.stderr.contains("holds a change a stopped mapgate did not finish"), "\(other.stderr)")
        let owner = try mapgate.run(["list"])
        #expect(owner.status == 0 && owner.stdout.contains("geo"), "\(owner.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + "-journal"), "the owner's command undid it")
    }

    /// `verify` during a `remove` said the region's file was missing and exited 65 (an attack
    /// found it): `remove` deletes the file before the record, and `verify` takes no lock. A
    /// problem found is looked at again once no writer is at work; the region removed meanwhile
    /// is then left out of the listing, and one asked for by name is not installed. The removal
    /// is held 2 s after the file is deleted (a preloaded `unlink`), as a loaded machine holds it.
    @Test func verifyDuringARemoveIsNoFalseAlarm() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        let slow = try PreloadLibrary.compileSlowFileDeletion(in: workspace.work.path, suffix: "/regions/geo.mbtiles")
        let file = mapgate.dataDirectory + "/regions/geo.mbtiles"
        for named in [false, true] {
            #expect(try mapgate.run(["sync", "geo"]).status == 0)
            let remove = try mapgate.start(["remove", "geo"], environment: ["LD_PRELOAD": slow])
            #expect(waitUntil { !FileManager.default.fileExists(atPath: file) }, "the removal began")
            let verify = try mapgate.run(["verify"] + (named ? ["geo"] : []))
            #expect(remove.wait(timeout: 20) == 0, "\(remove.stderr)")
            #expect(verify.status != 65 && !verify.stderr.contains("missing"), "named \(named): \(verify.status) \(verify.stderr)")
            #expect(verify.stderr.contains("waiting for another mapgate to finish"), "\(verify.stderr)")
            if named {
                #expect(verify.status == 1 && verify.stderr.contains("region geo: not installed"), "\(verify.status) \(verify.stderr)")
            } else {
                #expect(verify.status == 0, "\(verify.stderr)")
            }
        }
    }

    /// Issue 26 item 10: a catalog with 100,000 bad entries printed 100,000 lines. The first 10
    /// are said, then how many more; `--json` lists every one.
    @Test func manyBadCatalogEntriesAreCountedNotAllPrinted() throws {
        let bad = (0..<30).map { #"{"id": "bad\#($0)", "name": "Bad", "version": "1"}"# }.joined(separator: ",")
        try workspace.work.write("www/catalog.json", #"{"formatVersion": 1, "publisher": "t", "serial": 1, "expires": "2036-01-01T00:00:00Z", "regions": [\#(bad)]}"#)
        let catalog = try mapgate.run(["catalog"])
        #expect(catalog.status == 65, "\(catalog.stderr)")
        let lines = catalog.stderr.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("error: catalog ") && $0.contains(": region bad") }.count == 10, "\(catalog.stderr.prefix(2000))")
        #expect(catalog.stderr.contains("20 more region entries rejected (30 in all; --json lists them all)"), "\(catalog.stderr)")
        #expect(lines.count <= 12, "\(lines.count) lines")
        let json = try mapgate.run(["catalog", "--json"])
        #expect(json.stdout.split(separator: "\n").filter { $0.contains("\"error\"") }.count == 30, "\(json.stdout)")
    }

    /// Issue 26 item 8: U+202E, U+202C, U+200B and U+FEFF in names reached the terminal raw from
    /// `catalog` and `list` (a name could reorder what the user reads); a name holding U+0000 was
    /// stored and listed cut; an emoji name lost a character in the table.
    @Test func namesAreShownWholeEscapedAndAligned() throws {
        let names = ["evil\u{202E}gpj.exe\u{202C} \u{200B}\u{FEFF}x", "before\u{0}after", "🗺️ World map"]
        for (index, name) in names.enumerated() {
            try workspace.builder.add(
                id: "r\(index)", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png", overrides: ["name": name])
        }
        try workspace.builder.write()
        let catalog = try mapgate.run(["catalog"])
        #expect(catalog.status == 0, "\(catalog.stderr)")
        for forbidden in ["\u{202E}", "\u{202C}", "\u{200B}", "\u{FEFF}", "\u{0}"] { #expect(!catalog.stdout.unicodeScalars.contains(forbidden.unicodeScalars.first!)) }
        #expect(catalog.stdout.contains("evil\\u{202e}gpj.exe\\u{202c} \\u{200b}\\u{feff}x"), "\(catalog.stdout)")
        #expect(catalog.stdout.contains("before\\x00after"), "\(catalog.stdout)")
        #expect(catalog.stdout.contains("🗺️ World map"), "\(catalog.stdout)")
        #expect(try mapgate.run(["sync", "r1", "r2"]).status == 0)
        let list = try mapgate.run(["list"])
        #expect(list.stdout.contains("before\\x00after"), "\(list.stdout)")
        // Aligned by terminal columns: the column after the names starts at one column on every row.
        let rows = list.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("r1") || $0.hasPrefix("r2") }
        #expect(rows.count == 2, "\(list.stdout)")
        let starts = rows.map { row in TerminalText.width(String(row[..<(row.range(of: "  1")?.lowerBound ?? row.endIndex)])) }
        #expect(Set(starts).count == 1, "\(list.stdout)")
    }
}
