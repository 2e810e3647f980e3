import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// `check` and `status` run as subprocesses against the test origin, time moved by faketime.
@Suite struct GateCommandTests {
    let workspace: CLIWorkspace
    var origin: TestOrigin { workspace.origin }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        for name in ["itunes-lookup-com.facebook.Facebook.json", "itunes-lookup-empty.json", "itunes-lookup-invalid-id.json"] {
            try FileManager.default.copyItem(atPath: try TestPaths.shared("lookup/" + name), toPath: workspace.work.file("www/" + name))
        }
    }

    func configure(lookup path: String, extra: [String: Any] = [:]) throws {
        var fields: [String: Any] = ["appID": 284_882_215, "country": "us", "lookupURL": origin.baseURL + path]
        fields.merge(extra) { $1 }
        try mapgate.configure(fields)
    }

    @Test func checkWithARealAnswerStartsTheGracePeriod() throws {
        try configure(lookup: "/itunes-lookup-com.facebook.Facebook.json")
        let result = try mapgate.run(["check"], at: "2027-01-10 08:00:00")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("installed version   1.4.0"))
        #expect(result.stdout.contains("store version       15.0"))
        #expect(result.stdout.contains("store URL           https://itunes.apple.com/"))
        #expect(result.stdout.contains("gate                newer version 15.0 known since 2027-01-10, grace until 2027-02-09"))
        let hit = try #require(origin.requests.last)
        #expect(hit.target.contains("id=284882215&country=us&_="))
        #expect(hit.userAgent == "mapgate/\(BuildInfo.version)")
    }

    @Test func checkJSONHasTheDocumentedKeys() throws {
        try configure(lookup: "/itunes-lookup-com.facebook.Facebook.json")
        let result = try mapgate.run(["check", "--json"], at: "2027-01-10 08:00:00")
        #expect(result.status == 0)
        let object = try MapGateBinary.json(result.stdout)
        #expect(Set(object.keys) == [
            "installedVersion", "storeVersion", "releaseDate", "releaseNotes", "storeURL", "state", "pendingVersion",
            "firstSeen", "graceUntil", "usesLeft", "promptsShown", "usesHeld", "lastLookup", "lookupError", "mode",
        ])
        #expect(object["state"] as? String == "grace")
        #expect(object["storeVersion"] as? String == "15.0")
        #expect(object["pendingVersion"] as? String == "15.0")
        // faketime starts the clock at the given time and lets it run: allow a busy machine's seconds.
        let firstSeen = try #require((object["firstSeen"] as? String).flatMap(ISODate.parse))
        let graceUntil = try #require((object["graceUntil"] as? String).flatMap(ISODate.parse))
        #expect(abs(firstSeen.timeIntervalSince(try #require(ISODate.parse("2027-01-10T08:00:00Z")))) < 60)
        #expect(graceUntil.timeIntervalSince(firstSeen) == 30 * 86_400)
        #expect(object["releaseDate"] is NSNull)
        #expect(object["usesLeft"] as? Int == 5)
    }

    @Test func statusAfterTheGracePeriodShowsUsesLeftWithoutTheNetwork() throws {
        try configure(lookup: "/itunes-lookup-com.facebook.Facebook.json")
        #expect(try mapgate.run(["check"], at: "2027-01-10 08:00:00").status == 0)
        origin.clearRequests()
        let result = try mapgate.run(["status", "--json"], at: "2027-02-10 08:00:00")
        #expect(result.status == 0)
        let object = try MapGateBinary.json(result.stdout)
        #expect(object["state"] as? String == "prompting")
        #expect(object["usesLeft"] as? Int == 5)
        #expect(origin.requests.isEmpty)
    }

    @Test func closedGateExits77AndSettingTheClockBackKeepsItClosed() throws {
        try configure(lookup: "/itunes-lookup-com.facebook.Facebook.json", extra: ["maxPrompts": 0])
        #expect(try mapgate.run(["check"], at: "2027-01-10 08:00:00").status == 0)
        let closed = try mapgate.run(["check"], at: "2027-02-10 08:00:00")
        #expect(closed.status == 77)
        #expect(closed.stdout.contains("update required: install version 15.0"))
        let clockBack = try mapgate.run(["status", "--json"], at: "2027-01-01 00:00:00")
        #expect(clockBack.status == 77)
        #expect(try MapGateBinary.json(clockBack.stdout)["state"] as? String == "closed")
    }

    @Test func notPublishedInTheStorefrontExits65AndKeepsTheState() throws {
        try configure(lookup: "/itunes-lookup-com.facebook.Facebook.json")
        #expect(try mapgate.run(["check"], at: "2027-01-10 08:00:00").status == 0)
        try configure(lookup: "/itunes-lookup-empty.json", extra: ["country": "kr"])
        let result = try mapgate.run(["check", "--json"], at: "2027-01-11 08:00:00")
        #expect(result.status == 65)
        #expect(result.stderr.contains("not published in storefront \"kr\""))
        let object = try MapGateBinary.json(result.stdout)
        #expect(object["state"] as? String == "grace")
        #expect(object["pendingVersion"] as? String == "15.0")
        #expect((object["lookupError"] as? String)?.contains("resultCount 0") == true)
    }

    @Test func invalidIDAnswerExits65() throws {
        try configure(lookup: "/itunes-lookup-invalid-id.json")
        let result = try mapgate.run(["check"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("the service answered"))
        // No good answer ever: not "up to date", which nobody knows (issue 37).
        #expect(result.stdout.contains("gate                not checked yet: the store has not been reached"), "\(result.stdout)")
    }

    @Test func networkFailureExits69AndStillShowsTheSavedState() throws {
        try mapgate.configure(["appID": 1, "lookupURL": "http://127.0.0.1:1/lookup"])
        let result = try mapgate.run(["check"])
        #expect(result.status == 69)
        #expect(result.stderr.contains("store lookup:"))
        #expect(result.stderr.contains("127.0.0.1:1"))
        #expect(result.stdout.contains("installed version   1.4.0"))
    }

    @Test func damagedStateIsReportedAndReplaced() throws {
        try mapgate.configure([:])
        try FileManager.default.createDirectory(atPath: mapgate.dataDirectory, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: mapgate.dataDirectory + "/state.sqlite"))
        let result = try mapgate.run(["status"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("was damaged"))
        #expect(try mapgate.run(["status"]).stderr.isEmpty)
    }
}
