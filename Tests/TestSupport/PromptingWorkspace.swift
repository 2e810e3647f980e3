import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension CLIWorkspace {
    /// The moment the gate's tests use: past the grace of version 1.5.0 (published 2027-01-01).
    public static let duringPrompts = "2027-02-05 00:00:00"

    /// A workspace whose gate prompts: the store reports 1.5.0, region `plain` was synced on
    /// 2027-01-01, and one use was delivered at ``duringPrompts`` (4 left). Runs as `user`
    /// (the gate's tests run as an unprivileged user, as the threat is one).
    public static func prompting(user: uid_t?) throws -> CLIWorkspace {
        let workspace = try CLIWorkspace(user: user)
        let mapgate = workspace.mapgate
        try workspace.publish(version: "1.5.0")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        let synced = try mapgate.run(["sync", "plain"], at: "2027-01-01 00:00:00")
        guard synced.status == 0 else { throw MissingFixture(path: "region plain synced (\(synced.stderr))") }
        let first = try mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: duringPrompts)
        guard first.status == 0, first.stderr.contains("5 uses left") else { throw MissingFixture(path: "a first prompted use (\(first.stderr))") }
        return workspace
    }

    /// The prompted uses spent so far, from `status --json` at `time`.
    public func promptsShown(at time: String = duringPrompts) throws -> Int {
        let status = try mapgate.run(["status", "--json"], at: time)
        guard let shown = try MapGateBinary.json(status.stdout)["promptsShown"] as? Int else {
            throw MissingFixture(path: "promptsShown in status --json (\(status.stdout) \(status.stderr))")
        }
        return shown
    }
}
