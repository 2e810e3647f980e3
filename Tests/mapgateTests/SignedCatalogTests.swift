import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Signed catalogs with the real `minisign`, through the built binary: each way a catalog can be
/// forged, replayed or left to go stale is refused before anything is downloaded.
@Suite struct SignedCatalogTests {
    let workspace: CLIWorkspace
    let key: PublisherKey
    var mapgate: MapGateBinary { workspace.mapgate }
    var builder: CatalogBuilder { workspace.builder }
    var catalogPath: String { workspace.work.file("www/catalog.json") }

    init() throws {
        workspace = try CLIWorkspace()
        key = try PublisherKey(in: workspace.work.path)
        try workspace.publish(version: "1.4.0")
        try builder.add(id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png")
        try trust([key])
        try mapgate.writeConfig(["catalogURL": workspace.catalogURL])
    }

    func trust(_ keys: [PublisherKey]) throws {
        try mapgate.writePolicy([
            "lookupURL": workspace.lookupURL, "requireSignedCatalog": true, "trustedKeys": try keys.map { try $0.publicKeyLine },
        ])
    }

    /// Writes and signs the catalog with `signer` (the trusted key by default).
    func publish(serial: Int = 1, expires: String = "2030-01-01T00:00:00Z", extra: [String: Any] = [:], signer: PublisherKey? = nil) throws {
        try builder.write(extra: ["serial": serial, "expires": expires].merging(extra) { $1 })
        try (signer ?? key).sign(catalogPath)
    }

    func sync(at time: String = "2027-01-01 00:00:00") throws -> ProcessResult {
        workspace.origin.clearRequests()
        return try mapgate.run(["sync", "geo"], at: time)
    }

    func expectRefused(_ result: ProcessResult, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 65, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(reason), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(!workspace.origin.requests.contains { $0.path.contains("/packages/") }, sourceLocation: sourceLocation)
    }

    @Test func aGoodSignatureInstallsAndCatalogShowsTheKey() throws {
        try publish(serial: 7)
        #expect(try sync().status == 0)
        let listing = try mapgate.run(["catalog"])
        #expect(listing.stdout.contains("Test Maps: 1 region, generated 2026-11-01, serial 7, expires 2030-01-01, signed by key "))
        let json = try MapGateBinary.json(try mapgate.run(["catalog", "--json"]).stdout.split(separator: "\n").first.map(String.init) ?? "")
        #expect(json["serial"] as? Int == 7)
        #expect((json["signedBy"] as? String)?.count == 16)
    }

    @Test func noSignatureIsRefused() throws {
        try publish()
        try FileManager.default.removeItem(atPath: catalogPath + ".minisig")
        expectRefused(try sync(), "no signature at \(workspace.catalogURL).minisig")
    }

    /// A Wi-Fi login page (a captive portal) answering for the catalog or its signature is said
    /// as what it is (69: try again once signed in), not as a tampered catalog (found by an
    /// attack: "signature refused: the file changed after signing", 65).
    @Test(arguments: ["catalog.json", "catalog.json.minisig"])
    func aLoginPageInPlaceOfTheCatalogIsSaidAsSuch(file: String) throws {
        try publish()
        let page = "\n  <!DOCTYPE html><html><head><title>Sign in to CafeWiFi</title></head><body>Login</body></html>\n"
        try Data(page.utf8).write(to: URL(fileURLWithPath: workspace.work.file("www/" + file)))
        let result = try sync()
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("the server answered with a web page (HTML)"), "\(result.stderr)")
        #expect(!result.stderr.contains("changed after signing") && !result.stderr.contains("malformed"), "\(result.stderr)")
    }

    /// A catalog request answered 503 (or cut) once is tried again, as a package's is (found by
    /// an attack: one dropped connection on a poor network failed the run); a refused connection
    /// is said at once.
    /// A catalog moved to another place with its signature and packages, the old place redirecting
    /// the catalog only (found by an attack: the signature was asked for at the old place alone,
    /// and the catalog refused as unsigned): the signature is found beside the moved catalog.
    @Test func aCatalogMovedWithItsSignatureIsVerifiedThere() throws {
        try publish()
        let www = workspace.work.file("www")
        try FileManager.default.createDirectory(atPath: www + "/v2", withIntermediateDirectories: true)
        for name in ["catalog.json", "catalog.json.minisig", "packages"] { try FileManager.default.moveItem(atPath: www + "/" + name, toPath: www + "/v2/" + name) }
        try Data("/v2/catalog.json\n".utf8).write(to: URL(fileURLWithPath: www + "/catalog.json.redirect"))
        let result = try sync()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(workspace.origin.requests.contains { $0.path == "/v2/catalog.json.minisig" })
        #expect(workspace.origin.requests.contains { $0.path.hasPrefix("/v2/packages/") })
    }

    @Test func aCatalogAnswered503OnceIsTriedAgain() throws {
        try publish()
        try mapgate.writeConfig(["catalogURL": workspace.origin.baseURL + "/_fault/status=503,times=1/catalog.json"])
        let result = try sync()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(workspace.origin.requests.filter { $0.path.hasSuffix("/catalog.json") }.count == 2)
        try mapgate.writeConfig(["catalogURL": "http://127.0.0.1:1/catalog.json"])
        let started = Date()
        #expect(try mapgate.run(["catalog"]).status == 69)
        #expect(Date().timeIntervalSince(started) < 5, "a refused connection is not tried again")
    }

    @Test func aCatalogChangedAfterSigningIsRefused() throws {
        try publish()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: catalogPath))
        let index = try #require(bytes.firstIndex(of: UInt8(ascii: "T")))  // "Test Maps" → "Uest Maps"
        bytes[index] = UInt8(ascii: "U")
        try bytes.write(to: URL(fileURLWithPath: catalogPath))
        expectRefused(try sync(), "changed after signing")
    }

    @Test(arguments: ["signature", "trusted comment", "algorithm", "truncated"])
    func aDamagedSignatureIsRefused(part: String) throws {
        try publish()
        var lines = try String(contentsOfFile: catalogPath + ".minisig", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        switch part {
        case "signature":
            var bytes = try #require(Data(base64Encoded: lines[1]))
            bytes[bytes.count - 1] ^= 1
            lines[1] = bytes.base64EncodedString()
        case "trusted comment":
            lines[2] += " (edited)"
        case "algorithm":
            var bytes = try #require(Data(base64Encoded: lines[1]))
            bytes[0] = UInt8(ascii: "X")
            lines[1] = bytes.base64EncodedString()
        default:
            lines = Array(lines.prefix(2))
        }
        try lines.joined(separator: "\n").write(toFile: catalogPath + ".minisig", atomically: true, encoding: .utf8)
        let result = try sync()
        expectRefused(result, "signature refused")
    }

    @Test func aSignatureByAnUnknownKeyIsRefused() throws {
        let stranger = try PublisherKey(in: workspace.work.path, name: "stranger")
        try publish(signer: stranger)
        expectRefused(try sync(), "which is not trusted")
    }

    @Test func eitherOfTwoTrustedKeysWorks() throws {
        let next = try PublisherKey(in: workspace.work.path, name: "next")
        try trust([key, next])
        try publish(serial: 1, signer: next)
        #expect(try sync().status == 0)
    }

    @Test func anOlderSerialIsARollback() throws {
        try publish(serial: 5)
        #expect(try mapgate.run(["catalog"]).status == 0)
        try publish(serial: 4)
        expectRefused(try sync(), "serial 4 is lower than 5, already accepted from key ")
    }

    @Test func theSameSerialWithOtherBytesIsRefused() throws {
        try publish(serial: 5)
        #expect(try mapgate.run(["catalog"]).status == 0)
        try publish(serial: 5, extra: ["publisher": "Other Maps"])
        expectRefused(try sync(), "serial 5 was accepted with other contents")
    }

    /// A signed catalog that never expires could be replayed forever (found by an attack): a
    /// client kept on it never sees the publisher's later rules. Refused before any package,
    /// and nothing is saved of it (a catalog with `expires` is then accepted at serial 1).
    @Test func aSignedCatalogWithoutExpiresIsRefused() throws {
        try builder.write(extra: ["serial": 1])
        try key.sign(catalogPath)
        expectRefused(try sync(), "a signed catalog must say when it expires")
        try publish(serial: 1)
        let accepted = try sync()
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }

    @Test func anExpiredCatalogIsRefusedEvenWithTheClockSetBack() throws {
        try publish(serial: 1, expires: "2027-03-01T00:00:00Z")
        #expect(try mapgate.run(["catalog"], at: "2027-02-01 00:00:00").status == 0)
        expectRefused(try sync(at: "2027-04-01 00:00:00"), "expired on 2027-03-01 00:00 (UTC)")
        // With what to do about it (found by an attack: a stick's user was given no way on).
        expectRefused(
            try sync(at: "2027-04-01 00:00:00"),
            "refusing a stale catalog; a newer catalog is needed: the publisher's next one, or a mirror written since")
        // The gate's clock never goes back: set to January, the catalog is still stale.
        expectRefused(try sync(at: "2027-01-15 00:00:00"), "expired on 2027-03-01 00:00 (UTC)")
        // In the time a clock on the user's wall reads, in the user's words (found by an attack:
        // "2027-03-01T00:00:00Z", which a user in Tokyo had to convert).
        workspace.origin.clearRequests()
        let tokyo = try mapgate.run(
            ["sync", "geo"], at: "2027-04-01 00:00:00", environment: ["TZ": "Asia/Tokyo", "LANG": "ja_JP.UTF-8", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""])
        expectRefused(tokyo, "2027-03-01 09:00 (UTC+9)")
        #expect(!tokyo.stderr.contains("T00:00:00Z") && tokyo.stderr.contains("期限"), "\(tokyo.stderr)")
    }

    /// A clock once wrong ahead (a dead battery: 2028), then set right: the catalog accepted
    /// before stays refused (mapgate's time never goes back, as above), and the refusal says the
    /// clock's reading beside the time it went by; a catalog the publisher made later (a new
    /// stick) is judged by the clock as it reads, so the machine is not locked out of every
    /// catalog for good (found by an attack: offline, only a lookup online could end it).
    @Test func aClockOnceWrongAheadLocksOutNoLaterCatalog() throws {
        try publish(serial: 1, expires: "2027-03-01T00:00:00Z", extra: ["generated": "2026-12-01T00:00:00Z"])
        #expect(try sync(at: "2027-01-01 00:00:00").status == 0)
        expectRefused(try sync(at: "2028-01-10 00:00:00"), "expired on 2027-03-01 00:00 (UTC)")
        let same = try sync(at: "2027-01-05 00:00:00")
        expectRefused(same, "expired on 2027-03-01 00:00 (UTC) (the time is 2028-01-10")
        // To the minute: a loaded machine takes a second or more to start the run under faketime.
        #expect(same.stderr.contains("the clock reads 2027-01-05 00:00 (UTC)"), "\(same.stderr)")
        try publish(serial: 2, expires: "2027-04-01T00:00:00Z", extra: ["generated": "2027-01-04T00:00:00Z"])
        let later = try sync(at: "2027-01-05 00:00:00")
        #expect(later.status == 0, "\(later.stderr)")
        // Not for one run only: the next runs judge it by the clock's reading too (they refused it
        // by the gate's clock once), until it is stale by the reading; the clock set back after
        // that revives nothing.
        let again = try sync(at: "2027-01-06 00:00:00")
        #expect(again.status == 0, "\(again.stderr)")
        // The older catalog again (an old stick) is said as older, not as expired by a clock that
        // was wrong (found by an attack: "expired … the time is 2028-01-10 …").
        try publish(serial: 1, expires: "2027-03-01T00:00:00Z", extra: ["generated": "2026-12-01T00:00:00Z"])
        let older = try sync(at: "2027-01-06 00:00:00")
        expectRefused(older, "serial 1 is lower than 2, already accepted from key ")
        #expect(!older.stderr.contains("expired"), "\(older.stderr)")
        try publish(serial: 2, expires: "2027-04-01T00:00:00Z", extra: ["generated": "2027-01-04T00:00:00Z"])
        #expect(try mapgate.run(["catalog"], at: "2027-03-31 00:00:00").status == 0)
        expectRefused(try sync(at: "2027-04-02 00:00:00"), "expired on 2027-04-01 00:00 (UTC) (the time is 2027-04-02")
        expectRefused(try sync(at: "2027-03-15 00:00:00"), "expired on 2027-04-01 00:00 (UTC) (the time is 2027-04-02")
        // Never before the newest catalog accepted was published: one published later still, and
        // stale by then, is refused with the clock set back behind that.
        try publish(serial: 3, expires: "2027-01-03T00:00:00Z", extra: ["generated": "2027-01-02T00:00:00Z"])
        let stale = try sync(at: "2027-01-02 12:00:00")
        expectRefused(stale, "expired on 2027-01-03 00:00 (UTC) (the time is 2027-01-04")
        // Said as that floor, not as the gate's clock (found by reading the note again: "mapgate's
        // time never goes back past the latest it saw", beside a time it had not seen).
        #expect(stale.stderr.contains("but a catalog accepted before was published at 2027-01-04 00:00 (UTC)"), "\(stale.stderr)")
    }

    @Test func aCatalogOver16MiBIsRefusedWithThatReason() throws {
        try publish()
        try Data(repeating: 0x20, count: (16 << 20) + 1).write(to: URL(fileURLWithPath: catalogPath))
        expectRefused(try sync(), "catalog larger than 16 MiB")
    }

    /// The publisher's critical update: a signed `gate.minimumAppVersion` closes an older app at
    /// once, and keeps it closed offline on the next run.
    @Test func thePublishersMinimumVersionClosesTheGateAtOnce() throws {
        try publish(serial: 1)
        #expect(try sync().status == 0)
        try publish(serial: 2, extra: ["gate": ["minimumAppVersion": "9.0"]])
        #expect(try mapgate.run(["catalog"]).status == 0)
        try mapgate.writePolicy(["lookupURL": "http://127.0.0.1:1/lookup", "requireSignedCatalog": true, "trustedKeys": [try key.publicKeyLine]])
        let refused = try mapgate.run(["tile", "geo", "0", "0", "0"])
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("install version 9.0"), "\(refused.stderr)")
        let status = try mapgate.run(["status"])
        #expect(status.stdout.contains("the publisher requires mapgate 9.0 or later"), "\(status.stdout)")
    }

    /// Round two: serial 5000 from one publisher made another key's serial 1001 "a rollback".
    /// Serials are remembered per signing key.
    @Test func serialsAreRememberedPerSigningKey() throws {
        let other = try PublisherKey(in: workspace.work.path, name: "other")
        try trust([key, other])
        try publish(serial: 5000)
        #expect(try mapgate.run(["catalog"]).status == 0)
        try publish(serial: 1001, signer: other)
        #expect(try sync().status == 0)
        // Each key's own rollback is still one.
        try publish(serial: 4999)
        expectRefused(try sync(), "serial 4999 is lower than 5000, already accepted from key ")
    }

    /// Round two: `requireSignedCatalog: false` with `trustedKeys` refused an unsigned catalog.
    /// Now it is accepted; a signature that is there is still checked (a bad one is refused).
    @Test func unsignedIsAllowedWhereThePolicySaysSoButABadSignatureIsNot() throws {
        try mapgate.writePolicy(["lookupURL": workspace.lookupURL, "requireSignedCatalog": false, "trustedKeys": [try key.publicKeyLine]])
        try publish()
        try FileManager.default.removeItem(atPath: catalogPath + ".minisig")
        #expect(try sync().status == 0)
        let stranger = try PublisherKey(in: workspace.work.path, name: "stranger")
        try publish(serial: 2, signer: stranger)
        expectRefused(try sync(), "which is not trusted")
    }

    @Test func anUnsignedCatalogCannotSetTheGate() throws {
        try mapgate.writePolicy(["lookupURL": workspace.lookupURL, "requireSignedCatalog": false])
        try builder.write(extra: ["gate": ["maxPrompts": 0, "minimumAppVersion": "9.0"]])
        #expect(try sync().status == 0)
        #expect(try mapgate.run(["tile", "geo", "0", "0", "0"]).status == 0)
    }
}

/// Text from a hostile publisher or store never reaches the terminal raw.
@Suite struct HostileTextTests {
    @Test func catalogNamesAndReleaseNotesAreEscaped() throws {
        let workspace = try CLIWorkspace()
        let mapgate = workspace.mapgate
        let evil = "Evil\u{1B}[2J\u{1B}]0;pwned\u{07}\r\nerror: fake line\u{9B}31m"
        try workspace.publish(version: "1.5.0", notes: "Notes \u{1B}]0;title\u{07}\rover")
        try workspace.builder.add(
            id: "geo", source: try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), format: "png",
            overrides: ["name": evil, "version": "1\u{1B}[31m"])
        try workspace.builder.write(extra: ["publisher": evil])
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "geo"]).status == 0)
        for arguments in [["catalog"], ["list"], ["check"], ["status"], ["sync", "geo"]] {
            let result = try mapgate.run(arguments)
            for output in [result.stdout, result.stderr] {
                #expect(!output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(arguments): \(output)")
                #expect(!output.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) }, "\(arguments)")
                #expect(!output.split(separator: "\n").contains { $0.hasPrefix("error: fake") }, "\(arguments): \(output)")
            }
        }
        let catalog = try mapgate.run(["catalog"]).stdout
        #expect(catalog.contains("Evil\\e[2J\\e]0;pwned\\x07\\r\\nerror: fake line\\x9b31m"), "\(catalog)")
    }
}
