import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Every command's `--json` output against the schema docs/commands.md documents: JSON Lines only on
/// stdout, the same keys for every outcome, errors as objects with `error` and `exitCode`.
@Suite struct JSONOutputTests {
    static let schemas: [String: Set<String>] = [
        "version": ["version"],
        "gate": [
            "installedVersion", "storeVersion", "releaseDate", "releaseNotes", "storeURL", "state", "pendingVersion", "firstSeen",
            "graceUntil", "usesLeft", "promptsShown", "usesHeld", "lastLookup", "lookupError", "mode",
        ],
        "catalog": [
            "id", "name", "version", "size", "installedSize", "format", "minzoom", "maxzoom", "installedVersion", "status",
            "publisher", "serial", "expires", "signedBy",
        ],
        "sync": ["region", "action", "version", "previousVersion", "bytes", "resumedFrom", "transfer", "error", "exitCode"],
        "list": ["id", "name", "version", "format", "minzoom", "maxzoom", "tiles", "sizeOnDisk", "bounds", "installedAt", "source", "sha256", "contentHash", "damaged"],
        "remove": ["region", "action", "version", "bytes", "error", "exitCode"],
        "verify": ["region", "version", "ok", "problem", "unreadable", "catalogDisagrees", "contentHash"],
        "open": ["region", "viewer", "tilejson"],
        "serve": ["url", "regions"],
        "mirror": ["id", "kind", "action", "version", "bytes", "reason"],
        "mirror-summary": ["mirror", "regions", "styles", "deltas", "bytes", "failed"],
        "demo": ["kind", "text"],
        "error": ["error", "exitCode"],
    ]

    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
    }

    /// Checks that stdout is JSON Lines whose objects have exactly `schema`'s keys (or the error
    /// object's), and returns them.
    @discardableResult
    func check(_ stdout: String, _ schema: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let lines = stdout.split(separator: "\n").map(String.init)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try MapGateBinary.json(line)
            let keys = Set(object.keys)
            #expect(keys == Self.schemas[schema] || keys == Self.schemas["error"], "\(schema): \(line)", sourceLocation: sourceLocation)
            objects.append(object)
        }
        return objects
    }

    @Test func everyCommandPrintsOnlyItsSchema() throws {
        try check(try mapgate.run(["--version", "--json"]).stdout, "version")
        try check(try mapgate.run(["check", "--json"]).stdout, "gate")
        try check(try mapgate.run(["status", "--json"]).stdout, "gate")
        try check(try mapgate.run(["catalog", "--json"]).stdout, "catalog")
        let installed = try check(try mapgate.run(["sync", "geo", "--json"]).stdout, "sync")
        #expect(installed.first?["action"] as? String == "installed")
        let again = try check(try mapgate.run(["sync", "--json"]).stdout, "sync")
        #expect(again.first?["action"] as? String == "up-to-date")
        try check(try mapgate.run(["list", "--json"]).stdout, "list")
        try check(try mapgate.run(["verify", "--json"]).stdout, "verify")
        let mirrored = try mapgate.run(["mirror", workspace.work.file("mirror"), "--json"])
        let mirrorLines = mirrored.stdout.split(separator: "\n").map(String.init)
        #expect(mirrorLines.count == 2, "\(mirrored.stdout)\(mirrored.stderr)")
        try check(mirrorLines.dropLast().joined(separator: "\n"), "mirror")
        try check(mirrorLines.last ?? "", "mirror-summary")
        let opened = try mapgate.start(["open", "geo", "--json"])
        try check(try #require(opened.firstLine()), "open")
        opened.signal(SIGTERM)
        _ = opened.wait()
        let served = try mapgate.start(["serve", "--port", "0", "--json"])
        try check(try #require(served.firstLine()), "serve")
        served.signal(SIGTERM)
        _ = served.wait()
        try check(try mapgate.run(["remove", "geo", "--json"]).stdout, "remove")
        let demo = try runProcess(mapgate.path, ["demo", "--json"], environment: mapgate.baseEnvironment.merging(["PWD": TestPaths.repository]) { $1 })
        try check(demo.stdout, "demo")
    }

    @Test func errorsAreObjectsWithTheExitCode() throws {
        let cases: [([String], Int, String)] = [
            (["remove", "nope"], 1, "remove"), (["tile", "nope", "0", "0", "0"], 1, "error"), (["sync", "../x"], 64, "error"),
            (["frobnicate"], 64, "error"), (["sync", "nope"], 1, "error"),
        ]
        for (arguments, code, schema) in cases {
            let result = try mapgate.run(arguments + ["--json"])
            #expect(result.status == Int32(code), "\(arguments)")
            let objects = try check(result.stdout, schema)
            #expect(objects.last?["exitCode"] as? Int == code, "\(arguments): \(result.stdout)")
            #expect((objects.last?["error"] as? String)?.isEmpty == false)
        }
        let failed = try check(try mapgate.run(["remove", "nope", "--json"]).stdout, "remove")
        #expect(failed.first?["action"] as? String == "failed")
    }
}
