import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The command-line shell, run as a subprocess: help, version, usage errors, exit codes.
@Suite struct CLIShellTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
    }

    @Test func versionPrintsTheCompiledInVersion() throws {
        let result = try mapgate.runBare(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "mapgate \(BuildInfo.version)\n")
    }

    @Test func rootHelpListsCommandsKeysAndExitCodes() throws {
        let result = try mapgate.runBare(["--help"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        for command in ["check", "status", "catalog", "sync", "list", "remove", "verify", "open", "serve", "tile", "demo"] {
            #expect(result.stdout.contains("\n  \(command) "), "command \(command) missing from help")
        }
        for key in Configuration.keys.map(\.name) {
            #expect(result.stdout.contains("  \(key) "), "config key \(key) missing from help")
        }
        #expect(result.stdout.contains("77 update required"))
        #expect(result.stdout.contains("--data-dir DIR"))
    }

    @Test func noCommandIsAUsageError() throws {
        let result = try mapgate.runBare([])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("usage: mapgate"))
    }

    @Test(arguments: [["frobnicate"], ["--frob", "status"], ["status", "--frob"], ["status", "extra"], ["check", "--config"]])
    func usageErrorsExit64(arguments: [String]) throws {
        let result = try mapgate.runBare(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: "))
        #expect(result.stderr.contains("usage: "))
    }

    /// Found by an attack: `mapgate mirror "$STICK"` with STICK unset wrote a mirror into the
    /// current folder (and removed hash-named files from its `packages/`), `sync --from ""` read
    /// it, `--data-dir ""` was a data directory named "". An empty argument is refused, before
    /// anything is read or written.
    @Test(arguments: [["mirror", ""], ["sync", "--from", ""], ["sync", "--from="], ["--data-dir", "", "list"], ["export", "geo", ""], ["publish", "", "--dry-run"]])
    func anEmptyArgumentIsAUsageError(arguments: [String]) throws {
        let result = try mapgate.runBare(arguments)
        #expect(result.status == 64, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("(an unset shell variable?)"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).allSatisfy { !["packages", "mirror.json", "catalog.json"].contains($0) })
    }

    /// Found by an attack: a folder name that is not UTF-8 (`Karten\xfc`, Latin-1) reached
    /// mapgate as `Karten\u{FFFD}`, another name: `mirror` wrote into that other folder and said
    /// done, `sync --from` read it. Refused, naming the argument.
    @Test func anArgumentThatIsNotUTF8IsAUsageError() throws {
        let result = try runProcess(
            "/bin/sh", ["-c", #"cd "$1" && exec "$0" mirror "$(printf 'Karten\374')""#, mapgate.path, work.path],
            environment: mapgate.baseEnvironment)
        #expect(result.status == 64, "\(result.stdout)\(result.stderr)")
        // The byte that is not UTF-8 shown as `\xFC`, not as U+FFFD (which says nothing of it).
        #expect(result.stderr.contains(#"argument 2 (Karten\xFC) is not UTF-8"#), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("Karten\u{FFFD}")))
    }

    /// Found by an attack: with libfaketime preloaded by hand (not through `faketime`), Swift sees
    /// no arguments at all, and mapgate crashed at start (exit 132). They are read from the kernel
    /// then, the check for names that are not UTF-8 included.
    @Test func argumentsReachMapgateWithLibfaketimePreloaded() throws {
        let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
        try #require(FileManager.default.fileExists(atPath: library), "libfaketime (scripts/install-deps)")
        let environment = mapgate.baseEnvironment.merging(["LD_PRELOAD": library, "FAKETIME": "@2027-02-05 00:00:00"]) { $1 }
        let version = try runProcess(mapgate.path, ["--version"], environment: environment)
        #expect(version.status == 0, "\(version.stdout)\(version.stderr)")
        #expect(version.stdout.hasPrefix("mapgate "), "\(version.stdout)")
        let latin1 = try runProcess(
            "/bin/sh", ["-c", #"cd "$1" && exec "$0" mirror "$(printf 'Karten\374')""#, mapgate.path, work.path], environment: environment)
        #expect(latin1.status == 64, "\(latin1.stdout)\(latin1.stderr)")
        #expect(latin1.stderr.contains("is not UTF-8"), "\(latin1.stderr)")
    }

    @Test(arguments: ["check", "status", "demo", "catalog", "sync", "list", "remove", "verify", "open", "serve", "tile"])
    func everyCommandHasHelp(command: String) throws {
        let result = try mapgate.runBare([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("mapgate \(command)"))
        let viaHelp = try mapgate.runBare(["help", command])
        #expect(viaHelp.status == 0)
    }

    @Test func configErrorNamesTheKeyAndExits64() throws {
        try mapgate.configure(["graceDays": "thirty"])
        let result = try mapgate.run(["status"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("key \"graceDays\": must be an integer"))
        #expect(result.stderr.contains("managed policy \(mapgate.policyPath)"))
    }

    @Test func unknownConfigKeyIsAnError() throws {
        try mapgate.configure(["apiKey": "x"])
        let result = try mapgate.run(["status"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("key \"apiKey\": unknown key"))
    }

    @Test func namedConfigFileMustExist() throws {
        let result = try mapgate.run(["status"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no such file"))
    }

    @Test func configAndDataDirComeFromTheEnvironmentToo() throws {
        try mapgate.configure(["maxPrompts": 2])
        // `status` makes no data directory; in one that exists it keeps the gate's copy.
        try FileManager.default.createDirectory(atPath: mapgate.dataDirectory, withIntermediateDirectories: true)
        let result = try mapgate.runBare(
            ["status", "--json"], environment: ["MAPGATE_CONFIG": mapgate.configPath, "MAPGATE_DATA_DIR": mapgate.dataDirectory])
        #expect(result.status == 0)
        #expect(try MapGateBinary.json(result.stdout)["usesLeft"] as? Int == 2)
        #expect(FileManager.default.fileExists(atPath: mapgate.dataDirectory + "/state.sqlite"))
    }

    /// The data directory's state.sqlite replaced by a FIFO (found by an attack: SQLite opened it
    /// without O_NONBLOCK, and status, list, tile, sync, mirror, check and catalog waited for ever):
    /// every command says what it is, at once, and exits 74.
    @Test func aStateDatabaseThatIsAFIFOIsRefusedAtOnce() throws {
        try mapgate.configure([:])
        try FileManager.default.createDirectory(atPath: mapgate.dataDirectory, withIntermediateDirectories: true)
        #expect(try mapgate.run(["status"]).status == 0)
        let path = mapgate.dataDirectory + "/state.sqlite"
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        for command in [["status"], ["list"], ["verify"], ["remove", "x"], ["tile", "x", "0", "0", "0", "-o", work.file("t")]] {
            let started = Date()
            let result = try mapgate.run(command)
            #expect(Date().timeIntervalSince(started) < 30, "\(command) waited")
            #expect(result.status == 74, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("state.sqlite is a FIFO, not a regular file: refused"), "\(command): \(result.stderr)")
        }
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommand() throws {
        try mapgate.configure([:])
        let before = try mapgate.runBare(["--json", "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory, "status"])
        let after = try mapgate.run(["status", "--json"])
        #expect(before.status == 0)
        #expect(after.status == 0)
        #expect(before.stdout == after.stdout)
        #expect(try MapGateBinary.json(after.stdout)["state"] as? String == "up-to-date")
    }

    @Test func quietPrintsNothingOnSuccess() throws {
        try mapgate.configure([:])
        let result = try mapgate.run(["status", "--quiet"])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty)
    }

    @Test func demoRunsTheWholeStory() throws {
        let result = try runProcess(mapgate.path, ["demo", "--fixtures", TestPaths.fixtures], environment: ["NO_COLOR": "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("demo-world: installed 2026.11"))
        #expect(result.stdout.contains("85 tiles"))
        #expect(result.stdout.contains("gate: newer version 1.5.0 known since"))
        #expect(result.stdout.contains("5 uses left"))
        #expect(result.stdout.contains("1 use left"))
        #expect(result.stdout.contains("refused (exit 77)"))
        #expect(result.stdout.contains("after updating to 1.5.0"))
        #expect(result.stdout.contains("GET /demo-world/2/1/1.png → 200, image/png"))
        #expect(result.stdout.contains("==> the viewer was served at http://127.0.0.1:"))
        #expect(!result.stdout.contains("==> viewer:"))  // no URL of a server that is gone
        #expect(!result.stdout.contains("\u{1B}["))
    }

    @Test func demoFixturesAreNewerThanTheInstalledVersion() throws {
        // The demo's story needs its "newer" answer to stay newer when the version is bumped.
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.fixtures + "/lookup/store-1.5.0.json"))
        let release = try StoreLookup(client: HTTPClient(), endpoint: "fixture", appID: 6_450_000_001, bundleID: nil, country: "us").decode(data)
        #expect(try AppVersion(BuildInfo.version) < AppVersion(release.version))
        #expect(FileManager.default.fileExists(atPath: TestPaths.fixtures + "/lookup/store-\(BuildInfo.version).json"))
    }
}
