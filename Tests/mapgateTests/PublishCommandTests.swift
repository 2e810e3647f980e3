import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// `publish` run as a subprocess on the shared real-world fixtures, and its output read back by
/// `sync` over HTTP.
@Suite struct PublishCommandTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.writeConfig([:])
        try FileManager.default.createDirectory(atPath: work.file("in"), withIntermediateDirectories: true)
    }

    var input: String { work.file("in") }
    var output: String { work.file("out") }

    /// Copies a shared fixture into the input folder (fails out loud when it is missing).
    @discardableResult
    func offer(_ fixture: String, as name: String) throws -> String {
        let path = input + "/" + name
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + fixture), toPath: path)
        return path
    }

    /// `minisign -G` into the work folder; returns (public key line, secret key path).
    /// A publisher's key by the real `minisign -G`; with a password, encrypted with cheap scrypt
    /// parameters (``PublisherKey/init(in:name:cheapPassword:)``): these tests are about how the
    /// password is asked, the derivation with minisign's own parameters is tested in the library.
    func makeKey(password: String? = nil) throws -> (publicKey: String, secretKey: String) {
        let key = try password.map { try PublisherKey(in: work.path, cheapPassword: $0) } ?? PublisherKey(in: work.path)
        let lines = try String(contentsOfFile: key.publicKeyFile, encoding: .utf8).split(separator: "\n")
        return (String(lines.last ?? ""), key.secretKeyFile)
    }

    @Test func publishedTreeIsSyncedOverHTTPWithTheSameTiles() throws {
        let cities = try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        let geo = try offer("mbtileserver-geography-class-png.mbtiles", as: "geo.mbtiles")
        let key = try makeKey()

        let published = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey, "--publisher", "Test Maps"])
        #expect(published.status == 0, "\(published.stderr)")
        #expect(published.stdout.contains("cities 2: added (packages/cities-2.mbtiles.gz"))
        #expect(published.stdout.contains("geo 1.0.0: added"))
        #expect(published.stdout.contains("(serial 1)"))
        let verified = try runProcess("/usr/bin/minisign", ["-V", "-p", work.file("publisher.pub"), "-m", output + "/catalog.json"])
        #expect(verified.status == 0, "\(verified.stderr)")

        let origin = try TestOrigin(root: output)
        defer { origin.stop() }
        try mapgate.writePolicy(["trustedKeys": [key.publicKey], "requireSignedCatalog": true])
        try mapgate.writeConfig(["catalogURL": origin.baseURL + "/catalog.json"])
        let sync = try mapgate.run(["sync", "cities", "geo"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("cities 2: installed"))
        #expect(sync.stdout.contains("geo 1.0.0: installed"))

        // Every tile comes out byte for byte as it went in.
        for (id, source) in [("cities", cities), ("geo", geo)] {
            var expected: [String: Data] = [:]
            try MBTilesFile(path: source).forEachTile { z, x, y, data in expected["\(z)/\(x)/\(y)"] = data }
            var installed: [String: Data] = [:]
            try MBTilesFile(path: mapgate.dataDirectory + "/regions/\(id).mbtiles").forEachTile { z, x, y, data in installed["\(z)/\(x)/\(y)"] = data }
            #expect(!expected.isEmpty)
            #expect(installed == expected, "region \(id)")
        }
        let tile = try mapgate.run(["tile", "cities", "1", "1", "0"])
        #expect(tile.status == 0)
        #expect(tile.stdoutData == (try MBTilesFile(path: cities).tile(z: 1, x: 1, y: 0)))

        // Nothing changed: nothing is written.
        let catalogBefore = try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json"))
        let again = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey, "--publisher", "Test Maps", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let rows = try again.stdout.split(separator: "\n").map { try MapGateBinary.json(String($0)) }
        #expect(rows.map { $0["action"] as? String } == ["unchanged", "unchanged"])
        #expect(rows.first?["region"] as? String == "cities")
        #expect(Set(rows.first?.keys.map { $0 } ?? []) == ["region", "action", "version", "previousVersion", "package", "size", "sha256", "deltas"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json")) == catalogBefore)
    }

    /// Issue 27: one bad input file per run (a folder of 40 with 3 bad ones took 3 runs), paths as
    /// `in//corrupt.mbtiles`, the password asked before saying the folder is not there, and
    /// "cannot read the secret key" without the reason.
    /// An input folder that is not there says so, not "not a folder" (found by a review); a file
    /// there is "not a folder". Both before any key is read (exit 64).
    @Test func aMissingInputFolderIsSaidToBeMissing() throws {
        let (_, secretKey) = try makeKey()
        let missing = try mapgate.run(["publish", work.file("nowhere"), "--out", output, "--key", secretKey])
        #expect(missing.status == 64 && missing.stderr.contains("nowhere: no such folder"), "\(missing.stderr)")
        FileManager.default.createFile(atPath: work.file("a-file"), contents: Data("x".utf8))
        let file = try mapgate.run(["publish", work.file("a-file"), "--out", output, "--key", secretKey])
        #expect(file.status == 64 && file.stderr.contains("a-file: not a folder"), "\(file.stderr)")
        for dryRun in [try mapgate.run(["publish", work.file("nowhere"), "--out", output, "--dry-run"])] {
            #expect(dryRun.status == 64 && dryRun.stderr.contains("no such folder"), "\(dryRun.stderr)")
        }
    }

    @Test func everyBadInputIsReportedInOneRunWithCleanPaths() throws {
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        try offer("node-mbtiles-corrupt.mbtiles", as: "corrupt.mbtiles")
        try offer("mbtileserver-invalid.mbtiles", as: "invalid.mbtiles")
        let key = try makeKey()
        let result = try mapgate.run(["publish", input + "/", "--out", output, "--key", key.secretKey])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("2 of its 3 tile files cannot be published"), "\(result.stderr)")
        #expect(result.stderr.contains(input + "/corrupt.mbtiles"), "\(result.stderr)")
        #expect(result.stderr.contains(input + "/invalid.mbtiles"), "\(result.stderr)")
        #expect(!result.stderr.contains("//"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output + "/catalog.json"))
    }

    /// The checks of a file's tiles and metadata (`center`, `scheme`) are reported for every file
    /// in one run too, with the files that failed the first checks (found by an attack: the first
    /// file with a bad `center` stopped the run, and the next run found the next one).
    @Test func laterChecksAreReportedForEveryFileInOneRun() throws {
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        for (name, edit) in [("centered", "INSERT OR REPLACE INTO metadata VALUES ('center', '0,0,99')"), ("schemed", "INSERT OR REPLACE INTO metadata VALUES ('scheme', 'xyz')")] {
            try offer("mbtileserver-world_cities.mbtiles", as: name + ".mbtiles")
            #expect(try runProcess("/usr/bin/sqlite3", [input + "/" + name + ".mbtiles", edit]).status == 0)
        }
        try offer("node-mbtiles-corrupt.mbtiles", as: "corrupt.mbtiles")
        let key = try makeKey()
        let result = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("3 of its 4 tile files cannot be published"), "\(result.stderr)")
        for name in ["centered", "schemed", "corrupt"] {
            #expect(result.stderr.contains(input + "/" + name + ".mbtiles: "), "\(name): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: output + "/catalog.json"))
    }

    /// Found by an attack: a writer killed in the middle of a transaction (rollback-journal mode,
    /// SQLite's default) left its `-journal`; publish read the file as it was, half written, and
    /// signed an uncommitted name and half-changed tiles. Refused, naming the journal; once
    /// sqlite3 has opened the file (rolling the write back), the committed name is published.
    @Test func aWriteCutOffInItsJournalIsRefusedUntilRolledBack() throws {
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        let file = input + "/cities.mbtiles"
        let writer = try runProcess("/usr/bin/python3", ["-c", """
            import os, sqlite3
            db = sqlite3.connect('\(file)', isolation_level=None)
            db.execute('PRAGMA cache_size=1'); db.execute('BEGIN')
            db.execute("UPDATE metadata SET value='UNCOMMITTED' WHERE name='name'")
            db.execute("UPDATE tiles SET tile_data=zeroblob(length(tile_data)) WHERE zoom_level=6")
            os.kill(os.getpid(), 9)
            """])
        #expect(writer.status != 0)
        #expect(FileManager.default.fileExists(atPath: file + "-journal"))
        let refused = try mapgate.run(["publish", input, "--out", output, "--dry-run"])
        #expect(refused.status == 65, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("cities.mbtiles-journal holds a write to it that was cut off"), "\(refused.stderr)")

        let rolledBack = try runProcess("/usr/bin/sqlite3", [file, "PRAGMA quick_check"])
        #expect(rolledBack.stdout.contains("ok"), "\(rolledBack.stdout)\(rolledBack.stderr)")
        let key = try makeKey()
        let published = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey])
        #expect(published.status == 0, "\(published.stderr)")
        let catalog = String(decoding: try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json")), as: UTF8.self)
        #expect(!catalog.contains("UNCOMMITTED") && catalog.contains("Major cities"), "\(catalog)")
    }

    /// Found by an attack on the viewer: a name with a direction override ("abc\u{202E}gnp.exe"
    /// read "abcexe.png" on every page), control characters (NUL, ESC, a newline) and 5,400
    /// characters were published. Refused, naming the file, where the name came from and why.
    @Test(arguments: [
        ("abc\u{202E}gnp.exe", "direction override (U+202E)"), ("abc\u{2067}gnp.exe\u{2069}", "direction override (U+2067)"),
        ("a\u{1B}[31mred", "control character (U+001B)"),
        ("two\nlines", "control character (U+000A)"), (String(repeating: "長", count: 201), "201 characters long, more than 200"),
    ])
    func aNameThatCannotBeShownIsRefused(_ name: String, _ reason: String) throws {
        try offer("mbtileserver-geography-class-png.mbtiles", as: "geo.mbtiles")
        let overrides = try JSONSerialization.data(withJSONObject: ["geo.mbtiles": ["name": name]])
        try overrides.write(to: URL(fileURLWithPath: input + "/regions.json"))
        let result = try mapgate.run(["publish", input, "--out", output, "--dry-run"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("geo.mbtiles") && result.stderr.contains("(from regions.json)") && result.stderr.contains(reason), "\(result.stderr)")
        // A name that is long but within the limit, with Arabic and a right-to-left mark, is fine.
        let fine = try JSONSerialization.data(withJSONObject: ["geo.mbtiles": ["name": String(repeating: "長", count: 190) + " بغداد\u{200F}"]])
        try fine.write(to: URL(fileURLWithPath: input + "/regions.json"))
        let ok = try mapgate.run(["publish", input, "--out", output, "--dry-run"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test func aMissingFolderIsSaidBeforeThePasswordIsAskedAndAMissingKeySaysWhy() throws {
        let key = try makeKey(password: "correct horse")
        let missing = try mapgate.run(["publish", work.file("nope"), "--out", output, "--key", key.secretKey], stdin: "")
        #expect(missing.status == 64, "\(missing.stderr)")
        #expect(missing.stderr.contains("nope: no such folder"), "\(missing.stderr)")
        #expect(!missing.stderr.lowercased().contains("password"), "\(missing.stderr)")
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        let noKey = try mapgate.run(["publish", input, "--out", output, "--key", work.file("no.key")])
        #expect(noKey.stderr.contains("cannot read the secret key (no such file)"), "\(noKey.stderr)")
    }

    @Test(arguments: [true, false])
    func passwordProtectedKeyFromTheEnvironmentOrStandardInput(fromEnvironment: Bool) throws {
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        let key = try makeKey(password: "correct horse")
        let arguments = ["publish", input, "--out", output, "--key", key.secretKey]
        let result = fromEnvironment
            ? try mapgate.run(arguments, environment: ["MAPGATE_KEY_PASSWORD": "correct horse"])
            : try mapgate.run(arguments, stdin: "correct horse\n")
        #expect(result.status == 0, "\(result.stderr)")
        let verified = try runProcess("/usr/bin/minisign", ["-V", "-p", work.file("publisher.pub"), "-m", output + "/catalog.json"])
        #expect(verified.status == 0, "\(verified.stderr)")

        let wrong = try mapgate.run(arguments + ["--serial", "9"], environment: ["MAPGATE_KEY_PASSWORD": "wrong"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("publisher.key"))
    }

    @Test func dryRunWritesNothingAndUsageErrorsExit64() throws {
        try offer("mbtileserver-geography-class-png.mbtiles", as: "geo.mbtiles")
        let dry = try mapgate.run(["publish", input, "--out", output, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("geo 1.0.0: would be added"))
        #expect(dry.stdout.contains("nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: output))

        let noKey = try mapgate.run(["publish", input, "--out", output])
        #expect(noKey.status == 64)
        #expect(noKey.stderr.contains("--key SECRET_KEY_FILE is required"))
        let badKeep = try mapgate.run(["publish", input, "--out", output, "--dry-run", "--keep", "0"])
        #expect(badKeep.status == 64)

        try offer("node-mbtiles-corrupt.mbtiles", as: "corrupt.mbtiles")
        let corrupt = try mapgate.run(["publish", input, "--out", output, "--dry-run"])
        #expect(corrupt.status == 65)
        #expect(corrupt.stderr.contains("corrupt.mbtiles"))
    }

    /// A serial with no room after it (found by an attack: `--serial 9223372036854775807` was
    /// taken, and every later publish trapped on the next serial, after writing its packages).
    @Test func aSerialWithNoRoomAfterItIsRefusedBeforeAnythingIsWritten() throws {
        try offer("mbtileserver-geography-class-png.mbtiles", as: "geo.mbtiles")
        let key = try makeKey()
        let tooLarge = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey, "--serial", "9223372036854775807"])
        #expect(tooLarge.status == 64, "\(tooLarge.stderr)")
        #expect(tooLarge.stderr.contains("--serial 9223372036854775807"), "\(tooLarge.stderr)")
        #expect(tooLarge.stderr.contains("9007199254740991"), "\(tooLarge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output + "/catalog.json"))

        let largest = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey, "--serial", "9007199254740991"])
        #expect(largest.status == 0, "\(largest.stderr)")
        let packages = try FileManager.default.contentsOfDirectory(atPath: output + "/packages").sorted()
        let catalog = try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json"))
        try offer("mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        for dryRun in [true, false] {
            let next = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey] + (dryRun ? ["--dry-run"] : []))
            #expect(next.status == 65, "\(next.stderr)")
            #expect(next.stderr.contains("serial 9007199254740991 leaves no room"), "\(next.stderr)")
            #expect(!next.stderr.contains("runtime failure"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: output + "/packages").sorted() == packages, "no package written")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output + "/catalog.json")) == catalog)
    }

    /// A line feed in a file name or in a version from regions.json is shown escaped in the error,
    /// as every control character from outside is (found by an attack: it printed a forged
    /// `error:` line of the publisher's choosing).
    @Test func lineBreaksFromTheInputAreEscapedInErrors() throws {
        let key = try makeKey()
        try offer("node-mbtiles-plain_1.mbtiles", as: "x\nerror: forged.mbtiles")
        let named = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey])
        #expect(named.status == 65, "\(named.stderr)")
        #expect(named.stderr.contains("x\\nerror: forged") && !named.stderr.contains("\nerror: forged"), "\(named.stderr)")
        try FileManager.default.removeItem(atPath: input + "/x\nerror: forged.mbtiles")
        try offer("node-mbtiles-plain_1.mbtiles", as: "ok.mbtiles")
        try work.write("in/regions.json", #"{"ok.mbtiles": {"version": "1\nerror: forged two"}}"#)
        let versioned = try mapgate.run(["publish", input, "--out", output, "--key", key.secretKey])
        #expect(versioned.status == 65, "\(versioned.stderr)")
        #expect(versioned.stderr.contains("1\\nerror: forged two") && !versioned.stderr.contains("\nerror: forged two"), "\(versioned.stderr)")
    }
}
