import Foundation
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `mapgate` binary as a user would, optionally at another time (libfaketime).
public struct MapGateBinary: Sendable {
    public let path: String
    public let dataDirectory: String
    public let configPath: String
    /// The managed policy the runs use (`MAPGATE_POLICY`): root-owned, since the tests run as root.
    public let policyPath: String
    /// The gate's own state folder (`XDG_STATE_HOME`), inside the test's folder.
    public let stateHome: String
    /// The user the runs run as (with `setpriv`), when not the tests' own (root): the tests of
    /// what a user can do to the gate run as an unprivileged user, as the threat is one.
    public let user: uid_t?
    /// The folder that user owns (data directory, state folder); nil when running as root.
    public let userFolder: String?

    /// What every test's policy starts from: a made-up app id and a lookup that reaches nothing,
    /// so that no test ever asks the real store. Never mutated.
    nonisolated(unsafe) public static let basePolicy: [String: Any] = [
        "appID": 1, "lookupURL": "http://127.0.0.1:1/lookup", "catalogURL": "http://127.0.0.1:1/catalog.json",
        "requireSignedCatalog": false, "allowInsecureLookup": true,
    ]

    /// - Parameter user: run every command as this uid (for example 65534, `nobody`). The
    ///   binary is copied into the test's folder (which anybody may read), the data directory and
    ///   state folder go into a folder that user owns; the policy stays root's.
    public init(workDirectory: String, user: uid_t? = nil) throws {
        self.user = user
        configPath = workDirectory + "/config.json"
        policyPath = workDirectory + "/policy.json"
        if let user {
            let folder = workDirectory + "/user"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            guard chown(folder, user, user) == 0, chmod(workDirectory, 0o755) == 0 else {
                throw MissingFixture(path: "a folder for uid \(user) (chown needs root)")
            }
            userFolder = folder
            dataDirectory = folder + "/data"
            stateHome = folder + "/state"
            path = workDirectory + "/mapgate"
            try? FileManager.default.removeItem(atPath: path)
            try SystemMachine.copyExecutable(try TestPaths.binary(), to: path)
        } else {
            userFolder = nil
            path = try TestPaths.binary()
            dataDirectory = workDirectory + "/data"
            stateHome = workDirectory + "/state"
        }
        try writePolicy([:])
    }

    /// Gives the user's folder back to the user after the test (as root) changed files in it.
    public func handBack() throws {
        guard let user, let userFolder else { return }
        let result = try runProcess("/bin/chown", ["-R", "\(user):\(user)", userFolder])
        guard result.status == 0 else { throw MissingFixture(path: "chown -R of \(userFolder): \(result.stderr)") }
    }

    /// The program and arguments that run `arguments` (a program and its arguments) as `user`.
    public func command(_ arguments: [String]) -> (String, [String]) {
        guard let user else { return (arguments[0], Array(arguments.dropFirst())) }
        return ("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=\(user)", "--clear-groups"] + arguments)
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
    /// Writes the policy over ``basePolicy`` and signs it with the test policy key (a debug
    /// build's profile trusts it): the lookup on 127.0.0.1 loosens the profile.
    public func writePolicy(_ fields: [String: Any]) throws {
        let merged = Self.basePolicy.merging(fields) { $1 }
        let data = try JSONSerialization.data(withJSONObject: merged, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: policyPath))
        try PublisherKey.testPolicy.sign(policyPath)
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
    ///
    /// - Parameter standIns: libraries mapgate opens with dlopen, replaced for this run by other
    ///   files (soname → file), as ``LibraryStandIns`` does it.
    public func run(
        _ arguments: [String], at time: String? = nil, environment: [String: String] = [:], stdin: String? = nil,
        standIns: [String: String] = [:]
    ) throws -> ProcessResult {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        // The wall clock is faked (and frozen) for the run; the monotonic clock stays real so
        // timeouts and waits still end.
        let env = baseEnvironment.merging(environment) { $1 }
        let (program, rest) = LibraryStandIns.wrap(command((time.map { ["/usr/bin/faketime", $0] } ?? []) + [path] + full), standIns)
        return try runProcess(program, rest, environment: env, stdin: stdin)
    }

    /// Starts a long-running `mapgate` (serve, open), at `time` if given.
    ///
    /// - Parameter fakeTime: a libfaketime specification (`faketime -f`), such as
    ///   `@2027-02-10 00:00:00 x3600`, instead of `time`.
    /// - Parameter prefix: a command that runs mapgate in its place (`prlimit --nofile=200:200`).
    public func start(
        _ arguments: [String], at time: String? = nil, fakeTime: String? = nil, environment: [String: String] = [:],
        standIns: [String: String] = [:], prefix: [String] = []
    ) throws -> BackgroundProcess {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        let env = baseEnvironment.merging(environment) { $1 }
        let faked = fakeTime.map { ["/usr/bin/faketime", "-f", $0] } ?? time.map { ["/usr/bin/faketime", $0] } ?? []
        let (program, rest) = LibraryStandIns.wrap(command(prefix + faked + [path] + full), standIns)
        return try BackgroundProcess(program, rest, environment: env)
    }

    /// Runs `mapgate` with exactly these arguments (no config or data directory added).
    public func runBare(_ arguments: [String], environment: [String: String] = [:], standIns: [String: String] = [:]) throws -> ProcessResult {
        let (program, rest) = LibraryStandIns.wrap(command([path] + arguments), standIns)
        return try runProcess(program, rest, environment: baseEnvironment.merging(environment) { $1 })
    }

    /// Parses one line of `--json` output.
    public static func json(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw MissingFixture(path: "a JSON object in: \(line)")
        }
        return object
    }
}

extension MapGateBinary {
    /// A `mapgate serve` started for a test, and the base URL its first line names.
    public struct Server {
        public let process: BackgroundProcess
        public let base: String
    }

    /// Starts `mapgate serve --port 0` (with `extra` arguments) and waits for its URL.
    public func serve(
        _ extra: [String] = [], at time: String? = nil, fakeTime: String? = nil, environment: [String: String] = [:]
    ) throws -> Server {
        let process = try start(["serve", "--port", "0"] + extra, at: time, fakeTime: fakeTime, environment: environment)
        guard let line = process.firstLine(), let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            process.signal(SIGTERM)
            throw MissingFixture(path: "a URL from mapgate serve (stderr: \(process.stderr))")
        }
        return Server(process: process, base: String(url.hasSuffix("/") ? url.dropLast() : url))
    }
}
