import Foundation

/// Runs the built `mapgate` binary as a user would, optionally at another time (libfaketime).
public struct MapGateBinary: Sendable {
    public let path: String
    public let dataDirectory: String
    public let configPath: String

    public init(workDirectory: String) throws {
        path = try TestPaths.binary()
        dataDirectory = workDirectory + "/data"
        configPath = workDirectory + "/config.json"
    }

    /// Writes the configuration file the runs use.
    public func writeConfig(_ fields: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: configPath))
    }

    /// Runs `mapgate` with `--config` and `--data-dir` set (after the arguments, which also
    /// checks that global options work after the command), at `time` if given
    /// (`"2027-01-01 00:00:00"`, UTC).
    public func run(_ arguments: [String], at time: String? = nil, environment: [String: String] = [:], stdin: String? = nil) throws -> ProcessResult {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        // The wall clock is faked (and frozen) for the run; the monotonic clock stays real so
        // timeouts and waits still end.
        var env = ["NO_COLOR": "1", "TZ": "UTC", "DONT_FAKE_MONOTONIC": "1"]
        for (key, value) in environment { env[key] = value }
        if let time {
            return try runProcess("/usr/bin/faketime", [time, path] + full, environment: env, stdin: stdin)
        }
        return try runProcess(path, full, environment: env, stdin: stdin)
    }

    /// Starts a long-running `mapgate` (serve, open), at `time` if given.
    public func start(_ arguments: [String], at time: String? = nil, environment: [String: String] = [:]) throws -> BackgroundProcess {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        let env = environment.merging(["NO_COLOR": "1", "TZ": "UTC", "DONT_FAKE_MONOTONIC": "1"]) { $1 }
        if let time { return try BackgroundProcess("/usr/bin/faketime", [time, path] + full, environment: env) }
        return try BackgroundProcess(path, full, environment: env)
    }

    /// Runs `mapgate` with exactly these arguments (no config or data directory added).
    public func runBare(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try runProcess(path, arguments, environment: environment.merging(["NO_COLOR": "1"]) { $1 })
    }

    /// Parses one line of `--json` output.
    public static func json(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw MissingFixture(path: "a JSON object in: \(line)")
        }
        return object
    }
}
