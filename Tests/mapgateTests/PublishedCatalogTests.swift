import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Catalogs made by `mapgate publish` in the test setup (as a publisher makes them, not by hand),
/// replayed and left to go stale as a hostile mirror would: what the client accepts and refuses.
@Suite struct PublishedCatalogTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary
    let key: PublisherKey
    let origin: TestOrigin
    var www: String { work.file("www") }

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
        key = try PublisherKey(in: work.path)
        try FileManager.default.createDirectory(atPath: work.file("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        origin = try TestOrigin(root: work.file("www"))
        try mapgate.writePolicy(["trustedKeys": [try key.publicKeyLine], "requireSignedCatalog": true])
        try mapgate.writeConfig(["catalogURL": origin.baseURL + "/catalog.json"])
    }

    /// Publishes `fixture` as region `geo` version `version`, at `time` (faketime), expiring after `days`.
    func publish(version: String, at time: String = "2027-01-01 00:00:00", expiresDays: Int = 30) throws {
        let source = try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles")
        try? FileManager.default.removeItem(atPath: work.file("in/geo.mbtiles"))
        try FileManager.default.copyItem(atPath: source, toPath: work.file("in/geo.mbtiles"))
        // A new version must be a new file: give it its own description.
        let edit = try runProcess("/usr/bin/sqlite3", [work.file("in/geo.mbtiles"), "INSERT OR REPLACE INTO metadata VALUES ('description', 'v\(version)')"])
        #expect(edit.status == 0, "\(edit.stderr)")
        try work.write("in/regions.json", #"{"geo.mbtiles": {"version": "\#(version)"}}"#)
        let published = try mapgate.run(
            ["publish", work.file("in"), "--out", www, "--key", key.secretKeyFile, "--expires-days", String(expiresDays)], at: time)
        #expect(published.status == 0, "\(published.stderr)")
    }

    func saveCatalog(as name: String) throws {
        for suffix in ["", ".minisig"] {
            try? FileManager.default.removeItem(atPath: work.file(name + suffix))
            try FileManager.default.copyItem(atPath: www + "/catalog.json" + suffix, toPath: work.file(name + suffix))
        }
    }

    func serveSavedCatalog(_ name: String) throws {
        for suffix in ["", ".minisig"] {
            try FileManager.default.removeItem(atPath: www + "/catalog.json" + suffix)
            try FileManager.default.copyItem(atPath: work.file(name + suffix), toPath: www + "/catalog.json" + suffix)
        }
    }

    @Test func aPublishedCatalogIsAcceptedAndSynced() throws {
        try publish(version: "1")
        let sync = try mapgate.run(["sync", "geo"], at: "2027-01-02 00:00:00")
        #expect(sync.status == 0, "\(sync.stderr)")
        let listing = try mapgate.run(["catalog"], at: "2027-01-02 00:00:00")
        #expect(listing.stdout.contains("serial 1"), "\(listing.stdout)")
        #expect(listing.stdout.contains("signed by key"))
    }

    /// A mirror that serves an older (validly signed) catalog again is refused: rollback.
    @Test func replayingAnOlderPublishedCatalogIsARollback() throws {
        try publish(version: "1")
        try saveCatalog(as: "serial-1.json")
        try publish(version: "2")
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-02 00:00:00").status == 0)
        try serveSavedCatalog("serial-1.json")
        let replayed = try mapgate.run(["sync", "geo"], at: "2027-01-03 00:00:00")
        #expect(replayed.status == 65)
        #expect(replayed.stderr.contains("serial 1 is lower than 2, already accepted from key "), "\(replayed.stderr)")
    }

    /// A mirror that keeps serving a catalog past its expiry (freeze) is refused, even with the
    /// clock set back after the client saw a later time.
    @Test func aFrozenPublishedCatalogExpires() throws {
        try publish(version: "1", expiresDays: 7)
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-02 00:00:00").status == 0)
        let stale = try mapgate.run(["sync", "geo"], at: "2027-01-20 00:00:00")
        #expect(stale.status == 65)
        #expect(stale.stderr.contains("expired on 2027-01-08"), "\(stale.stderr)")
        let setBack = try mapgate.run(["sync", "geo"], at: "2027-01-03 00:00:00")
        #expect(setBack.status == 65)
    }
}
