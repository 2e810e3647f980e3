import CLinux
import FoundationEssentials
import Glibc
import MapGateBase

/// The system service (issue 36): takes requests on a local socket and runs each as the service's
/// own process: the same mapgate, started as the service's user with the service's environment
/// (its data directory, gate record and clock), writing to the caller's terminal or files through
/// the descriptors the caller sent. The caller's signals reach the command as bytes on the
/// connection; a caller that goes away stops it (SIGTERM, which gives back an undelivered use).
///
/// What the caller may run is ``SystemAccess``'s decision, from the kernel's word on who it is.
public final class SystemService: Sendable {
    public struct Settings: Sendable {
        /// The program each request runs: `/proc/self/exe`, the running binary itself.
        public var executable = "/proc/self/exe"
        /// The service's own environment, which every command runs with (plus the caller's
        /// display variables, ``SystemRequest/passedVariables``).
        public var environment: [String: String]
        /// The administrators' group (nil: none exists, only root administers).
        public var administratorGroup: gid_t?
        /// The group as the service was told it (`--admin-group`), which a refusal names (nil:
        /// the default, ``SystemAccess/administratorGroupName``).
        public var administratorGroupName: String?
        /// Requests under way at once, in all and per user; more are refused (busy), not queued.
        public var maximumRequests = 64
        public var maximumRequestsPerUser = 8
        /// Of ``maximumRequests``, the last this many are for administrators only: users (many
        /// uids, as one user's subordinate uids are) cannot take every request and shut root out.
        public var reservedForAdministrators = 8
        /// Seconds between two runs of one ``SystemAccess/paced`` command by one user who is not
        /// an administrator.
        public var pacedInterval = 60.0
        /// How long a caller has to send its request once connected.
        public var requestTimeout = 10.0
        /// The signals a command gets the default action for (the service blocks them).
        public var defaultSignals: [Int32]
        /// The signals a caller may forward.
        public var forwardedSignals: Set<UInt8> = [UInt8(SIGINT), UInt8(SIGTERM), UInt8(SIGHUP), UInt8(SIGQUIT), UInt8(SIGTSTP), UInt8(SIGCONT)]
        /// The commands that are sessions of the machine's tile server (`serve`, `open`): each gets
        /// one end of a socket pair as its descriptor 3 (named by ``sessionVariable``), and
        /// ``session`` gets the other, on a thread of its own, for as long as the command runs.
        public var sessionCommands: Set<String> = []
        public var sessionVariable = "MAPGATE_MACHINE_SESSION_FD"
        /// Names the caller's process (the kernel's word, `SO_PEERCRED`) to the command: whether
        /// the caller is in its terminal's foreground decides whether the command reads an answer
        /// there (the terminal is not the command's own, so it cannot ask the terminal itself).
        public static let callerProcessVariable = "MAPGATE_CALLER_PROCESS"
        /// Names the caller's user (the kernel's word, `SO_PEERCRED`) to the command: the day a
        /// session pays is that user's, for that user's next session if the service dies.
        public static let callerUserVariable = "MAPGATE_CALLER_UID"
        /// Set to 1 for a command whose standard output its caller relays to a file
        /// (``SystemRequest/relaysOutput``): it changes only what the command prints about it.
        public static let relayedOutputVariable = "MAPGATE_RELAYED_OUTPUT"
        /// The name the command gives its standard output in what it says (``SystemRequest/outputName``).
        public static let outputNameVariable = "MAPGATE_OUTPUT_NAME"
        /// What such a command exits with when the user chose "update now" at its question:
        /// nothing was written, and its caller must not put its empty file in place of the user's
        /// (found by an attack: `tile -o FILE` emptied FILE). Never a process's exit code: the
        /// reply says 0, ``SystemReply/declined``.
        public static let declinedExitCode: Int32 = 200
        public var session: (@Sendable (_ socket: LocalSocket, _ caller: String) -> Void)?

        public init(environment: [String: String], administratorGroup: gid_t?, defaultSignals: [Int32]) {
            self.environment = environment.filter { !["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET"].contains($0.key) }
            self.administratorGroup = administratorGroup
            self.defaultSignals = defaultSignals
        }
    }

    /// How the command line reads: its command and its options by long name with their values
    /// (a flag's empty), as the command itself will parse it (nil: it does not parse, and the
    /// command would only say so).
    public typealias Parser = @Sendable (_ arguments: [String]) -> (command: String?, options: [String: String], positional: [String])?
    /// A line for the service's log (the journal under systemd).
    public typealias Log = @Sendable (_ line: String) -> Void

    private let listener: LocalSocket
    private let settings: Settings
    private let parse: Parser
    private let log: Log
    private let underWay = Locked<[uid_t: Int]>([:])
    /// When each user last ran each paced command (monotonic seconds).
    private let lastPaced = Locked<[String: Double]>([:])
    /// The commands running, for ``stop(grace:)``.
    private let running = Locked<Set<pid_t>>([])
    /// Those of them that are sessions of the machine's tile server (``Settings/sessionCommands``).
    private let sessions = Locked<Set<pid_t>>([])

    public init(listener: LocalSocket, settings: Settings, parse: @escaping Parser, log: @escaping Log) {
        self.listener = listener
        self.settings = settings
        self.parse = parse
        self.log = log
    }

    /// Takes connections until the process ends, each on a thread of its own.
    public func run() -> Never {
        while true {
            guard let connection = listener.accept() else { continue }
            let peer: PeerCredentials
            do {
                peer = try connection.peer()
            } catch {
                continue
            }
            if let refusal = admit(peer) {
                reply(connection, SystemReply(refusal: refusal))
                continue
            }
            do {
                try Threads.detach(name: "request") { [self] in
                    defer { release(peer.uid) }
                    serve(connection, peer: peer)
                }
            } catch {
                release(peer.uid)
                reply(connection, SystemReply(refusal: SystemRefusal(.start, errorMessage(error))))
            }
        }
    }

    /// Waits, at most `limit` seconds, until no session's command runs: those the machine's tile
    /// server ended (``MachineTileServer/endSessions()``) end on their own, as when the service
    /// dies, before ``stop(grace:)`` signals what is left (a signal reads as their users' stop).
    public func waitForSessions(within limit: Double) {
        let deadline = MonotonicClock.seconds + limit
        while MonotonicClock.seconds < deadline, !sessions.withLock({ $0.isEmpty }) { usleep(20_000) }
    }

    /// Stops every command running (SIGTERM: each gives back what it did not deliver) and waits
    /// up to `grace` seconds for them to end: the service is being stopped.
    public func stop(grace: Double) {
        // Continued too: a command stopped with Ctrl-Z does not act on SIGTERM (found by an
        // attack: each such command held the stop its whole grace).
        for pid in running.withLock({ $0 }) {
            kill(pid, SIGTERM)
            kill(pid, SIGCONT)
        }
        let deadline = MonotonicClock.seconds + grace
        while MonotonicClock.seconds < deadline, !running.withLock({ $0.isEmpty }) { usleep(20_000) }
    }

    /// Counts a request of `peer` as under way, or says why it is refused (busy, not queued).
    private func admit(_ peer: PeerCredentials) -> SystemRefusal? {
        let limit = isAdministrator(peer) ? settings.maximumRequests : settings.maximumRequests - settings.reservedForAdministrators
        return underWay.withLock { counts in
            let total = counts.values.reduce(0, +)
            if counts[peer.uid, default: 0] >= settings.maximumRequestsPerUser {
                return SystemRefusal(.userBusy, "\(settings.maximumRequestsPerUser)")
            }
            if total >= limit { return SystemRefusal(.busy, "\(total)") }
            counts[peer.uid, default: 0] += 1
            return nil
        }
    }

    private func isAdministrator(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || settings.administratorGroup.map(peer.isMember(of:)) ?? false
    }

    /// Whether `uid` may run the paced `command` now (noted if so).
    private func pace(_ command: String, for uid: uid_t) -> Bool {
        let now = MonotonicClock.seconds
        return lastPaced.withLock { last in
            let key = "\(uid) \(command)"
            if let previous = last[key], now - previous < settings.pacedInterval { return false }
            last[key] = now
            return true
        }
    }

    private func release(_ uid: uid_t) {
        underWay.withLock { counts in
            counts[uid, default: 1] -= 1
            if counts[uid] == 0 { counts[uid] = nil }
        }
    }

    private func serve(_ connection: LocalSocket, peer: PeerCredentials) {
        let request: SystemRequest
        var streams: [Int32]
        do {
            let message = try connection.receive(limit: SystemRequest.sizeLimit, maximumDescriptors: 4, timeout: settings.requestTimeout)
            streams = message.descriptors
            do {
                request = try JSONDecoder().decode(SystemRequest.self, from: message.body)
            } catch {
                streams.forEach { close($0) }
                return reply(connection, SystemReply(refusal: SystemRefusal(.request, L.localized("not a request"))))
            }
        } catch {
            return  // the caller went away or never said anything
        }
        defer { streams.forEach { close($0) } }
        // Three standard streams, and a fourth: a folder the caller opened (sync --from DIR) or a socket that writes one (mirror DIR).
        guard streams.count == 3 || streams.count == 4 else {
            return reply(connection, SystemReply(refusal: SystemRefusal(.request, L.localized("expected three descriptors, got %1$s", "\(streams.count)"))))
        }
        var passed: SystemAccess.PassedDescriptor?
        if streams.count == 4 {
            var info = stat()
            guard fstat(streams[3], &info) == 0, [S_IFDIR, S_IFSOCK].contains(info.st_mode & S_IFMT) else {
                return reply(connection, SystemReply(refusal: SystemRefusal(.request, L.localized("the fourth descriptor is neither a folder nor a socket"))))
            }
            passed = info.st_mode & S_IFMT == S_IFDIR ? .folder : .socket
        }
        let caller = "uid \(peer.uid) (pid \(peer.pid))"
        // A NUL ends a C string: the command would be started with each such argument cut there,
        // another line than the one checked (found by an attack: `--quiet\0` did not parse here,
        // the line was run unchecked, and started as `--quiet` it removed regions, sent the
        // machine's credentials to the caller's catalog and wrote the service's own files).
        if request.arguments.contains(where: { $0.utf8.contains(0) }) || request.environment.values.contains(where: { $0.utf8.contains(0) }) {
            log("\(caller): refused: a NUL byte in the request")
            return reply(connection, SystemReply(refusal: SystemRefusal(.request, L.localized("an argument or variable holds a NUL byte"))))
        }
        // Only a line that parses is run: what is checked is what runs. (mapgate's own client
        // parses the line before it sends it; a line that does not parse comes from another.)
        guard let parsed = parse(request.arguments) else {
            log("\(caller): refused: a command line that does not parse")
            return reply(connection, SystemReply(refusal: SystemRefusal(.request, L.localized("the command line does not parse"))))
        }
        let isSession = parsed.command.map(settings.sessionCommands.contains) ?? false
        let isAdministrator = isAdministrator(peer)
        if let refusal = SystemAccess.check(
            command: parsed.command, options: parsed.options, isAdministrator: isAdministrator, passed: passed, positional: parsed.positional,
            group: settings.administratorGroupName) {
            log("\(caller): refused \(TerminalText.inline(parsed.command ?? "-")): \(refusal.reason.rawValue) \(TerminalText.inline(refusal.subject))")
            return reply(connection, SystemReply(refusal: refusal))
        }
        if !isAdministrator, let command = parsed.command, SystemAccess.paced.contains(command), !pace(command, for: peer.uid) {
            log("\(caller): refused \(command): \(SystemRefusal.Reason.tooSoon.rawValue)")
            return reply(connection, SystemReply(refusal: SystemRefusal(.tooSoon, command)))
        }
        run(request, streams: streams, connection: connection, caller: caller, callerProcess: peer.pid, callerUser: peer.uid, isSession: isSession)
    }

    private func run(
        _ request: SystemRequest, streams: [Int32], connection: LocalSocket, caller: String, callerProcess: pid_t, callerUser: uid_t,
        isSession: Bool = false
    ) {
        var environment = settings.environment.merging(request.safeEnvironment) { $1 }
        // After the request's own: the kernel's word, never the caller's.
        environment[Settings.callerProcessVariable] = String(callerProcess)
        environment[Settings.callerUserVariable] = String(callerUser)
        environment[Settings.relayedOutputVariable] = request.relaysOutput == true ? "1" : nil
        environment[Settings.outputNameVariable] = request.safeOutputName
        var descriptors = streams
        var sessionEnds: (ours: LocalSocket, theirs: LocalSocket)?
        if isSession, settings.session != nil, streams.count == 3 {
            do {
                sessionEnds = try LocalSocket.pair(name: "machine session")
            } catch {
                return reply(connection, SystemReply(refusal: SystemRefusal(.start, errorMessage(error))))
            }
            descriptors.append(sessionEnds!.theirs.fileDescriptor)
            environment[settings.sessionVariable] = "3"
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.start(
                settings.executable, arguments: ["mapgate"] + request.arguments, environment: environment,
                descriptors: descriptors, defaultSignals: settings.defaultSignals)
        } catch {
            return reply(connection, SystemReply(refusal: SystemRefusal(.start, errorMessage(error))))
        }
        if let ours = sessionEnds?.ours, let handler = settings.session {
            // Only the command holds its end from here (ours is closed with the pair): its exit
            // ends the session.
            sessionEnds = nil
            do {
                try Threads.detach(name: "session") { handler(ours, caller) }
            } catch {
                ours.shutDown()
            }
        }
        running.withLock { _ = $0.insert(child.pid) }
        defer { running.withLock { _ = $0.remove(child.pid) } }
        if isSession {
            sessions.withLock { _ = $0.insert(child.pid) }
        }
        defer { if isSession { sessions.withLock { _ = $0.remove(child.pid) } } }
        // Each argument on the log's one line, its control characters escaped: a newline in an
        // argument made lines that read as another user's commands (found by an attack).
        log("\(caller): \(request.arguments.prefix(8).map(TerminalText.inline).joined(separator: " ")) (pid \(child.pid))")
        let ended = child.endDescriptor()
        defer { if ended >= 0 { close(ended) } }
        var watching = true
        while ended >= 0 {
            var entries = [pollfd(fd: ended, events: Int16(POLLIN), revents: 0), pollfd(fd: watching ? connection.fileDescriptor : -1, events: Int16(POLLIN), revents: 0)]
            let result = poll(&entries, 2, -1)
            if result < 0 {
                if errno == EINTR { continue }
                break
            }
            if entries[0].revents != 0 { break }
            if entries[1].revents != 0 {
                if let byte = connection.receiveByte() {
                    // Ctrl-Z as SIGTSTP, which the command (its SignalRouter) takes as the stop of
                    // its caller once no database call of its own is under way: a SIGSTOP could
                    // stop it holding the state database's lock, which every other user's command
                    // then waited on (found by an attack).
                    if settings.forwardedSignals.contains(byte) { child.send(Int32(byte)) }
                } else {
                    // The caller is gone (killed, its terminal closed): the command stops and
                    // gives back what it did not deliver (continued first, if the caller had
                    // stopped it with Ctrl-Z: a stopped process does not act on SIGTERM).
                    child.send(SIGTERM)
                    child.send(SIGCONT)
                    watching = false
                }
            }
        }
        let status = child.wait()
        log("\(caller): exit \(status) (pid \(child.pid))")
        if status == Settings.declinedExitCode, request.relaysOutput == true {
            var declined = SystemReply(exitCode: 0)
            declined.declined = true
            return reply(connection, declined)
        }
        reply(connection, SystemReply(exitCode: status))
    }

    private func reply(_ connection: LocalSocket, _ reply: SystemReply) {
        guard let body = try? JSONEncoder().encode(reply) else { return }
        try? connection.send(body)
    }
}
