import Foundation
import MapGate

/// Runs the built `mapgate` binary as a user would, optionally at another time (libfaketime).
public struct MapGateBinary: Sendable {
    public let path: String
    public let dataDirectory: String
    public let configPath: String
    /// The managed policy the runs use (`MAPGATE_POLICY`): root-owned, since the tests run as root.
    public let policyPath: String
    /// The gate's own state folder (`XDG_STATE_HOME`), inside the test's folder.
    public let stateHome: String

    /// What every test's policy starts from: a made-up app id and a lookup that reaches nothing,
    /// so that no test ever asks the real store. Never mutated.
    nonisolated(unsafe) public static let basePolicy: [String: Any] = [
        "appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": "http://127.0.0.1:1/catalog.json",
        "requireSignedCatalog": false,
    ]

    public init(workDirectory: String) throws {
        path = try TestPaths.binary()
        dataDirectory = workDirectory + "/data"
        configPath = workDirectory + "/config.json"
        policyPath = workDirectory + "/policy.json"
        stateHome = workDirectory + "/state"
        try writePolicy([:])
    }

    /// The environment of every run: the policy, the state home, no colour, UTC.
    public var baseEnvironment: [String: String] {
        ["NO_COLOR": "1", "TZ": "UTC", "DONT_FAKE_MONOTONIC": "1", "MAPGATE_POLICY": policyPath, "XDG_STATE_HOME": stateHome]
    }

    /// Writes the user's configuration file the runs use, exactly as given.
    public func writeConfig(_ fields: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: configPath))
    }

    /// Writes the managed policy: `fields` over ``basePolicy``.
    public func writePolicy(_ fields: [String: Any]) throws {
        let merged = Self.basePolicy.merging(fields) { $1 }
        let data = try JSONSerialization.data(withJSONObject: merged, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: policyPath))
    }

    /// Writes both files: the gate's keys go to the policy, the rest to the user's configuration.
    public func configure(_ fields: [String: Any]) throws {
        let policyKeys = Set(GateSettings.keys.map(\.name)).subtracting(["catalogURL"])
        try writePolicy(fields.filter { policyKeys.contains($0.key) })
        try writeConfig(fields.filter { !policyKeys.contains($0.key) })
    }

    /// Runs `mapgate` with `--config` and `--data-dir` set (after the arguments, which also
    /// checks that global options work after the command), at `time` if given
    /// (`"2027-01-01 00:00:00"`, UTC).
    public func run(_ arguments: [String], at time: String? = nil, environment: [String: String] = [:], stdin: String? = nil) throws -> ProcessResult {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        // The wall clock is faked (and frozen) for the run; the monotonic clock stays real so
        // timeouts and waits still end.
        let env = baseEnvironment.merging(environment) { $1 }
        if let time {
            return try runProcess("/usr/bin/faketime", [time, path] + full, environment: env, stdin: stdin)
        }
        return try runProcess(path, full, environment: env, stdin: stdin)
    }

    /// Starts a long-running `mapgate` (serve, open), at `time` if given.
    public func start(_ arguments: [String], at time: String? = nil, environment: [String: String] = [:]) throws -> BackgroundProcess {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        let env = baseEnvironment.merging(environment) { $1 }
        if let time { return try BackgroundProcess("/usr/bin/faketime", [time, path] + full, environment: env) }
        return try BackgroundProcess(path, full, environment: env)
    }

    /// Runs `mapgate` with exactly these arguments (no config or data directory added).
    public func runBare(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try runProcess(path, arguments, environment: baseEnvironment.merging(environment) { $1 })
    }

    /// Parses one line of `--json` output.
    public static func json(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw MissingFixture(path: "a JSON object in: \(line)")
        }
        return object
    }
}
