import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Byte snapshots of `--json` lines (issue 28): what scripts parse must not change by accident
/// (key order, escapes, number forms, null for a missing value). Each command runs on one
/// workspace at a fixed time; the test's folder and the origin's port are put back as `$WORK` and
/// `$PORT`. A change here is a change of the interface: docs/commands.md says what each key means.
@Suite struct JSONSnapshotTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    static let time = "2027-01-01 00:00:00"

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
    }

    func run(_ arguments: [String]) throws -> String {
        let result = try mapgate.run(arguments + ["--json"], at: Self.time)
        return result.stdout
            .replacingOccurrences(of: workspace.work.path, with: "$WORK")
            .replacingOccurrences(of: ":\(workspace.origin.port)", with: ":$PORT")
            // faketime starts the clock at the time given and lets it run: a slow run is a second on.
            .replacing(/(2027-01-(01|31))T00:00:[0-5][0-9]Z/) { "\($0.1)T00:00:00Z" }
    }

    /// Each command's lines, in the order run (one workspace: installed, then removed).
    static let expected: [([String], String)] = [
        (["--version"], #"{"version":"1.4.0"}"#),
        (["check"], #"{"firstSeen":"2027-01-01T00:00:00Z","graceUntil":"2027-01-31T00:00:00Z","installedVersion":"1.4.0","lastLookup":"2027-01-01T00:00:00Z","lookupError":null,"mode":"per-user","pendingVersion":"1.5.0","promptsShown":0,"releaseDate":null,"releaseNotes":null,"state":"grace","storeURL":"https://apps.example/mapgate","storeVersion":"1.5.0","usesHeld":0,"usesLeft":5}"#),
        (["status"], #"{"firstSeen":"2027-01-01T00:00:00Z","graceUntil":"2027-01-31T00:00:00Z","installedVersion":"1.4.0","lastLookup":"2027-01-01T00:00:00Z","lookupError":null,"mode":"per-user","pendingVersion":"1.5.0","promptsShown":0,"releaseDate":null,"releaseNotes":null,"state":"grace","storeURL":"https://apps.example/mapgate","storeVersion":"1.5.0","usesHeld":0,"usesLeft":5}"#),
        (["catalog"], #"{"expires":null,"format":"png","id":"geo","installedSize":494592,"installedVersion":null,"maxzoom":14,"minzoom":0,"name":"Geo","publisher":"Test Maps","serial":null,"signedBy":null,"size":301665,"status":"not-installed","version":"1"}"#),
        (["sync", "geo"], #"{"action":"installed","bytes":301665,"error":null,"exitCode":null,"previousVersion":null,"region":"geo","resumedFrom":0,"transfer":"full","version":"1"}"#),
        (["sync"], #"{"action":"up-to-date","bytes":0,"error":null,"exitCode":null,"previousVersion":"1","region":"geo","resumedFrom":0,"transfer":null,"version":"1"}"#),
        (["list"], #"{"bounds":[-180,-85.0511,180,85.0511],"contentHash":"A85C80BA1CE047E2D93DAC25C5179775","damaged":null,"format":"png","id":"geo","installedAt":"$TIME","maxzoom":1,"minzoom":0,"name":"Geo","sha256":"f0b24a2a7bc07ecfeeb5863349ef2e2fa9872f2300f6947939d5277090f34a13","sizeOnDisk":490496,"source":"http://127.0.0.1:$PORT/packages/geo-1.mbtiles.gz","tiles":5,"version":"1"}"#),
        (["verify"], #"{"catalogDisagrees":false,"contentHash":"A85C80BA1CE047E2D93DAC25C5179775","ok":true,"problem":null,"region":"geo","unreadable":false,"version":"1"}"#),
        // The test catalog's packages are not publish's gzip: the region cannot be rebuilt, and says so.
        (["mirror", "$WORK/m"], #"""
            {"action":"left-out","bytes":null,"id":"geo","kind":"region","reason":"its package cannot be rebuilt byte for byte from the installed file (updated by a delta, or packed with other gzip settings than 'mapgate publish')","version":null}
            {"bytes":0,"deltas":0,"failed":null,"mirror":"$WORK/m","regions":0,"styles":0}
            """#),
        (["remove", "geo"], #"{"action":"removed","bytes":null,"error":null,"exitCode":null,"region":"geo","version":"1"}"#),
        (["remove", "geo"], #"{"action":"failed","bytes":null,"error":"region geo: not installed (no region is installed; see 'mapgate catalog' and 'mapgate sync REGION')","exitCode":1,"region":"geo","version":null}"#),
        (["tile", "nope", "0", "0", "0"], #"{"error":"region nope: not installed (no region is installed; see 'mapgate catalog' and 'mapgate sync REGION')","exitCode":1}"#),
        (["sync", "../x"], #"{"error":"not a region id: \"../x\" is not of the form [a-z0-9][a-z0-9._-]{0,63}","exitCode":64}"#),
        // A control character from outside is escaped for the terminal; non-ASCII stays as it is.
        (["sync", "\u{1B}[31m東京"], #"{"error":"not a region id: \"\u001b[31m東京\" is not of the form [a-z0-9][a-z0-9._-]{0,63}","exitCode":64}"#),
    ]

    @Test func everyCommandsLinesAreByteForByteAsDocumented() throws {
        for (arguments, expected) in Self.expected {
            let actual = try run(arguments.map { $0.replacingOccurrences(of: "$WORK", with: workspace.work.path) })
                .replacing(/"installedAt":"2027-01-01T00:00:00Z"/, with: #""installedAt":"$TIME""#)
            #expect(actual == expected + "\n", "\(arguments)")
        }
    }
}
