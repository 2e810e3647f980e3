import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Failures that a `try?` turned into quiet wrong answers (issue 43): each now says what went
/// wrong. Run as an unprivileged user when the tests run as root (root reads everything).
@Suite struct QuietFailureTests {
    static let user: uid_t? = geteuid() == 0 ? 65534 : nil

    /// A workspace whose binary runs as the user, with region `plain` synced from its origin
    /// (the workspace is returned: its folder and origin live as long as it does).
    func syncedPlain() throws -> CLIWorkspace {
        let workspace = try CLIWorkspace(user: Self.user)
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try workspace.mapgate.configure(["catalogURL": workspace.catalogURL])
        try #require(try workspace.mapgate.run(["sync", "plain"]).status == 0)
        return workspace
    }

    /// A region file mapgate may not look at (its folder not searchable) is not "missing": `verify`
    /// says it cannot be read and why.
    @Test func aRegionFileThatCannotBeReadIsNotCalledMissing() throws {
        let workspace = try syncedPlain()
        let mapgate = workspace.mapgate
        let regions = mapgate.dataDirectory + "/regions"
        #expect(chmod(regions, 0o600) == 0)
        defer { chmod(regions, 0o755) }
        let verify = try mapgate.run(["verify", "plain"])
        #expect(verify.status == 74, "\(verify.stderr)")
        #expect(verify.stderr.contains("cannot be read") && verify.stderr.contains("permission denied"), "\(verify.stdout) \(verify.stderr)")
        #expect(!verify.stderr.contains("is missing") && !verify.stdout.contains("is missing"), "\(verify.stdout) \(verify.stderr)")
        #expect(!verify.stderr.contains("damaged") && !verify.stderr.contains("installs it again"), "\(verify.stderr)")
    }

    /// A drive that answers a read with an I/O error (EIO): the region cannot be checked, which
    /// is said as that (74), not as a damaged region to install again (found by an attack: 65,
    /// "damaged", and the advice to sync it). Nothing is changed: once the drive reads again, the
    /// region is intact and `sync` has nothing to do.
    @Test func aDriveThatFailsToReadIsNotADamagedRegion() throws {
        let workspace = try syncedPlain()
        let mapgate = workspace.mapgate
        let library = try PreloadLibrary.compileFailingRead(in: workspace.work.path, suffix: "/regions/plain.mbtiles")
        let verify = try mapgate.run(["verify", "plain"], environment: ["LD_PRELOAD": library])
        #expect(verify.status == 74, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stderr.contains("cannot be checked") && verify.stderr.lowercased().contains("input/output error"), "\(verify.stderr)")
        #expect(!verify.stderr.contains("damaged") && !verify.stderr.contains("installs it again"), "\(verify.stderr)")
        let json = try mapgate.run(["verify", "--json", "plain"], environment: ["LD_PRELOAD": library])
        let line = try MapGateBinary.json(json.stdout)
        #expect(json.status == 74 && line["ok"] as? Bool == false && line["unreadable"] as? Bool == true, "\(json.stdout) \(json.stderr)")
        let after = try mapgate.run(["verify", "plain"])
        #expect(after.status == 0 && after.stdout.contains("plain") && after.stdout.contains("ok"), "\(after.stdout) \(after.stderr)")
        let sync = try mapgate.run(["sync", "plain"])
        #expect(sync.status == 0 && !sync.stdout.contains("installed") , "\(sync.stdout) \(sync.stderr)")
    }

    /// `status` lists where each installed region came from; a data directory whose record of
    /// them cannot be read (here: the user may not read it) is said, with the reason, not shown as
    /// one with no region. The gate's answer and exit code are unchanged. (A record that is not a
    /// database is moved aside and started afresh, a repair `status` reports on its own.)
    @Test func statusSaysWhenTheRegionsCannotBeListed() throws {
        let workspace = try syncedPlain()
        let mapgate = workspace.mapgate
        let listed = try mapgate.run(["status"])
        #expect(listed.status == 0 && listed.stdout.contains("region plain "), "\(listed.stdout) \(listed.stderr)")
        #expect(chmod(mapgate.dataDirectory + "/state.sqlite", 0) == 0)
        defer { chmod(mapgate.dataDirectory + "/state.sqlite", 0o644) }
        let status = try mapgate.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(!status.stdout.contains("region plain "))
        #expect(status.stderr.contains("the installed regions cannot be listed") && status.stderr.contains("permission denied"), "\(status.stdout) \(status.stderr)")
    }

    /// An installed style that is not a style (a file cut short, edited, from another program) is
    /// not served, and the server says so once, with the reason, instead of nothing.
    @Test func aStyleThatCannotBeServedIsSaid() throws {
        let workspace = try syncedPlain()
        let mapgate = workspace.mapgate
        let styles = mapgate.dataDirectory + "/styles"
        try FileManager.default.createDirectory(atPath: styles, withIntermediateDirectories: true)
        try Data("{\"version\": 8, \"cut".utf8).write(to: URL(fileURLWithPath: styles + "/broken.json"))
        if let user = Self.user { _ = chown(styles, user, user); _ = chown(styles + "/broken.json", user, user) }
        let server = try mapgate.serve()
        defer { server.process.stop() }
        let answer = try HTTPClient().get(HTTPRequest(url: server.base + "/styles/broken/style.json"))
        #expect(answer.status == 404)
        #expect(waitUntil(timeout: 5) { server.process.stderr.contains("style broken cannot be served") }, "\(server.process.stderr)")
    }

    /// A region file whose metadata cannot be read is damaged (500 with the reason), not served
    /// with made-up facts.
    @Test func aRegionWhoseMetadataCannotBeReadIsDamagedNotGuessed() throws {
        let workspace = try syncedPlain()
        let mapgate = workspace.mapgate
        let file = mapgate.dataDirectory + "/regions/plain.mbtiles"
        let dropped = try runProcess("/usr/bin/sqlite3", [file, "DROP TABLE metadata"])
        try #require(dropped.status == 0, "\(dropped.stderr)")
        // Recorded as installed so (else the server finds the file changed before it reads it).
        let recorded = try runProcess(
            "/usr/bin/sqlite3",
            [mapgate.dataDirectory + "/state.sqlite",
             "UPDATE regions SET sha256 = '\(try SHA256Hasher.hex(ofFileAt: file))', size = \(FileManager.default.sizeOfItem(atPath: file)), file_modified = NULL, file_inode = NULL WHERE id = 'plain'"])
        try #require(recorded.status == 0, "\(recorded.stderr)")
        let server = try mapgate.serve()
        defer { server.process.stop() }
        let answer = try HTTPClient().get(HTTPRequest(url: server.base + "/plain.json"))
        #expect(answer.status == 500, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("metadata"), "\(String(decoding: answer.body, as: UTF8.self))")
    }
}
