import Foundation
import MapGate
import MapGateDemo

#if canImport(Glibc)
import Glibc
#endif

/// A machine in system mode, for tests run as root (issue 36): the system service runs as a uid of
/// its own (under `setpriv`, as systemd would start it, with its folder under the test's folder),
/// the managed policy (root's, signed with the test key) says `"mode": "system"`, and commands run
/// as other uids: ``administrator`` (in the administrators' group) and ``user`` (in none).
/// A test origin serves the lookup and the catalog, as in ``CLIWorkspace``.
public final class SystemMachine {
    public static let serviceUID: uid_t = 64_101
    public static let administrator: uid_t = 64_102
    public static let user: uid_t = 64_103
    public static let administratorsGroup: gid_t = 64_100
    /// What the machine's tile port answers while no session is open: to every request but
    /// `/health`, and to `/health` (503 both).
    public static let closedDoorText = "no map session is open on this machine: run mapgate open or mapgate serve\n"
    public static let closedDoorHealth = #"{"message":"no map session is open on this machine: run mapgate open or mapgate serve","status":"no-session"}"#

    public let work: TemporaryDirectory
    public let origin: TestOrigin
    public let builder: CatalogBuilder
    /// The binary, copied where every uid may run it.
    public let binary: String
    public let policyPath: String
    public let socketPath: String
    /// The service's own folder (its data directory, state, configuration): 0700, its uid's.
    public let serviceFolder: String
    /// The port of the machine's tile server (the policy's `systemTilePort`): one free when made.
    public let tilePort: UInt16
    public var tileServerURL: String { "http://127.0.0.1:\(tilePort)" }
    public private(set) var service: BackgroundProcess?

    public var lookupURL: String { origin.baseURL + "/lookup.json" }
    public var catalogURL: String { origin.baseURL + "/catalog.json" }
    public var serviceData: String { serviceFolder + "/data" }

    public init() throws {
        guard geteuid() == 0 else { throw MissingFixture(path: "root, to run the service and the users as uids of their own") }
        work = try TemporaryDirectory()
        chmod(work.path, 0o755)
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        origin = try TestOrigin(root: work.file("www"))
        builder = CatalogBuilder(root: work.file("www"))
        binary = work.file("mapgate")
        try Self.copyExecutable(try TestPaths.binary(), to: binary)
        policyPath = work.file("policy.json")
        tilePort = try TestPorts.free()
        serviceFolder = work.file("service")
        let run = work.file("run")
        socketPath = run + "/system.sock"
        for folder in [serviceFolder, run] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            chown(folder, Self.serviceUID, Self.serviceUID)
        }
        chmod(serviceFolder, 0o700)
        chmod(run, 0o755)
        for uid in [Self.administrator, Self.user] {
            let home = work.file("home-\(uid)")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            chown(home, uid, uid)
        }
        try writePolicy([:])
        try writeServiceConfig(["catalogURL": catalogURL])
    }

    deinit { service?.stop() }

    /// The policy: system mode with this machine's socket and service uid, the origin's lookup,
    /// and `fields` over it; signed with the test policy key (its lookup on 127.0.0.1 loosens).
    public func writePolicy(_ fields: [String: Any]) throws {
        let base: [String: Any] = [
            "mode": "system", "systemSocket": socketPath, "systemUser": "\(Self.serviceUID)", "systemTilePort": Int(tilePort),
            "appID": 1, "lookupURL": lookupURL, "allowInsecureLookup": true, "requireSignedCatalog": false,
        ]
        let data = try JSONSerialization.data(withJSONObject: base.merging(fields) { $1 }, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: policyPath))
        try PublisherKey.testPolicy.sign(policyPath)
    }

    /// The service's configuration file (where its catalog is).
    public func writeServiceConfig(_ fields: [String: Any]) throws {
        let path = serviceFolder + "/config.json"
        try JSONSerialization.data(withJSONObject: fields).write(to: URL(fileURLWithPath: path))
        chown(path, Self.serviceUID, Self.serviceUID)
    }

    /// Makes the origin's lookup answer report `version`.
    public func publish(version: String) throws {
        let answer: [String: Any] = ["resultCount": 1, "results": [["version": version, "trackViewUrl": "https://apps.example/mapgate", "trackId": 1]]]
        try JSONSerialization.data(withJSONObject: answer).write(to: URL(fileURLWithPath: work.file("www/lookup.json")))
    }

    /// Adds a region made from a real MBTiles file to the origin's catalog.
    public func offer(_ id: String, fixture: String, format: String, version: String = "1", gzip: Bool = true) throws {
        try builder.add(id: id, source: try TestPaths.shared("mbtiles/" + fixture), version: version, format: format, gzip: gzip)
        try builder.write()
    }

    /// The service's environment, as packaging/mapgate-system.service sets it.
    public var serviceEnvironment: [String: String] {
        [
            "HOME": serviceFolder, "MAPGATE_DATA_DIR": serviceData, "XDG_STATE_HOME": serviceFolder + "/state",
            "MAPGATE_CONFIG": serviceFolder + "/config.json", "XDG_CONFIG_HOME": serviceFolder, "MAPGATE_POLICY": policyPath,
            "NO_COLOR": "1", "TZ": "UTC", "DONT_FAKE_MONOTONIC": "1",
        ]
    }

    /// Starts the service as its uid (at `time`, a frozen libfaketime time, if given: the clock is
    /// the service's), with `environment` added to its own, and waits for its socket. `prefix`
    /// (such as `prlimit --nofile=1024:1024 --`) runs it.
    /// - Parameter inner: a command the service runs under once it is its own uid (`env LD_PRELOAD=…`
    ///   for a library the service alone loads), after `faketime` when `time` is given.
    public func startService(at time: String? = nil, environment: [String: String] = [:], prefix: [String] = [], inner: [String] = []) throws {
        service?.stop()
        let faked = (time.map { ["/usr/bin/faketime", $0] } ?? []) + inner
        let command = prefix + ["/usr/bin/setpriv", "--reuid=\(Self.serviceUID)", "--regid=\(Self.serviceUID)", "--clear-groups"] + faked
            + [binary, "system-service", "--admin-group", "\(Self.administratorsGroup)"]
        var process = try BackgroundProcess(command[0], Array(command.dropFirst()), environment: serviceEnvironment.merging(environment) { $1 })
        service = process
        var retries = 0
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? LocalSocket.connect(to: socketPath)) != nil { return }
            // "Text file busy": a process another suite started while this binary was being
            // written still held it open for a moment (CI, under load). Tried again.
            if !process.isRunning, process.stderr.contains("Text file busy"), retries < 5 {
                retries += 1
                usleep(200_000)
                process = try BackgroundProcess(command[0], Array(command.dropFirst()), environment: serviceEnvironment.merging(environment) { $1 })
                service = process
                continue
            }
            usleep(20_000)
        }
        throw MissingFixture(path: "the system service's socket (stderr: \(process.stderr))")
    }

    /// Copies the executable at `source` to `destination` (mode 0755) through descriptors that
    /// no process started meanwhile inherits: one that did would hold the new file open for
    /// writing, and running it would fail with "Text file busy" for as long as that process lives.
    static func copyExecutable(_ source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw MissingFixture(path: source) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard output >= 0 else { throw MissingFixture(path: destination) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            guard count > 0 else {
                guard count == 0 else { throw MissingFixture(path: source) }
                break
            }
            let written = buffer.withUnsafeBytes { write(output, $0.baseAddress, count) }
            guard written == count else { throw MissingFixture(path: destination) }
        }
        fchmod(output, 0o755)
    }

    /// Starts the service as systemd's socket units would (`systemd-socket-activate` as its uid,
    /// with `mapgate-system.socket`'s socket named `system`, `mapgate-system-tiles.socket`'s
    /// port, `tilesPort` or the policy's, named `tiles`, and `mapgate-system-tiles-ipv6.socket`'s
    /// `[::1]` at it, named `tiles-ipv6`): all are bound at once, and the service itself starts at
    /// the first connection to one, on the real clock (the `faketime` wrapper forks, so the
    /// process `LISTEN_PID` names would not be mapgate). Returns once all are bound.
    public func startActivatedService(tilesPort: UInt16? = nil) throws {
        service?.stop()
        unlink(socketPath)  // an earlier service's: the wait below is for the new one
        let variables = serviceEnvironment.merging(["PATH": "/usr/bin:/bin"]) { $1 }.sorted { $0.key < $1.key }.map { "--setenv=\($0.key)=\($0.value)" }
        // Under a shell that waits for it: systemd-socket-activate closes every descriptor it
        // inherited, and Foundation takes the close of its own for the child's end (then waits
        // for it, blocking every other Process). The shell keeps it; signals go to its child.
        let process = try BackgroundProcess(
            "/usr/bin/setpriv",
            ["--reuid=\(Self.serviceUID)", "--regid=\(Self.serviceUID)", "--clear-groups", "/bin/sh", "-c", "\"$@\"; exit $?", "sh",
             "/usr/bin/systemd-socket-activate",
             "--listen=\(socketPath)", "--listen=127.0.0.1:\(tilesPort ?? tilePort)", "--listen=[::1]:\(tilesPort ?? tilePort)",
             "--fdname=system:tiles:tiles-ipv6"] + variables
                + [binary, "system-service", "--admin-group", "\(Self.administratorsGroup)"],
            environment: serviceEnvironment)
        service = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            // It says each socket it listens on, `[::1]` last.
            if process.stderr.contains("Listening on [::1]:") {
                chmod(socketPath, 0o666)  // SocketMode=0666
                return
            }
            usleep(20_000)
        }
        throw MissingFixture(path: "the activated sockets (stderr: \(process.stderr))")
    }

    /// The command line that runs `arguments` as `uid` (root: as is), the administrator with the
    /// administrators' group as a supplementary group.
    public func command(_ arguments: [String], as uid: uid_t) -> (String, [String]) {
        guard uid != 0 else { return (arguments[0], Array(arguments.dropFirst())) }
        let groups = uid == Self.administrator ? ["--groups=\(Self.administratorsGroup)"] : ["--clear-groups"]
        return ("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)"] + groups + arguments)
    }

    /// A user's environment: the policy (as the machine has it), a home of their own.
    public func environment(of uid: uid_t) -> [String: String] {
        let home = uid == 0 ? work.file("home-root") : work.file("home-\(uid)")
        return ["HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
                "MAPGATE_POLICY": policyPath, "NO_COLOR": "1", "TZ": "UTC", "DONT_FAKE_MONOTONIC": "1"]
    }

    /// Runs `mapgate arguments` as `uid`, with `prefix` (such as `faketime TIME`) before it;
    /// `bare`: `prefix` is the whole command line (it names the binary itself).
    public func run(
        _ arguments: [String], as uid: uid_t, prefix: [String] = [], environment: [String: String] = [:], stdin: String? = nil, bare: Bool = false
    ) throws -> ProcessResult {
        let (program, rest) = command(bare ? prefix : prefix + [binary] + arguments, as: uid)
        return try runProcess(program, rest, environment: self.environment(of: uid).merging(environment) { $1 }, stdin: stdin)
    }

    /// Starts `mapgate arguments` as `uid` without waiting.
    public func start(_ arguments: [String], as uid: uid_t, environment: [String: String] = [:]) throws -> BackgroundProcess {
        let (program, rest) = command([binary] + arguments, as: uid)
        return try BackgroundProcess(program, rest, environment: self.environment(of: uid).merging(environment) { $1 })
    }

    /// The prompted uses the service's gate has spent, from `status --json` as root.
    public func promptsShown() throws -> Int {
        let status = try run(["status", "--json"], as: 0)
        guard let shown = try MapGateBinary.json(status.stdout)["promptsShown"] as? Int else {
            throw MissingFixture(path: "promptsShown in status --json (\(status.stdout) \(status.stderr))")
        }
        return shown
    }
}
