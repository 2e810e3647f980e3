import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// `mapgate system-service`: the system service of system mode (issue 36), run by systemd as the
/// policy's `systemUser` (the package's `mapgate-system.service`, started by its socket).
struct SystemServiceCommand: Command {
    static let name = "system-service"
    static let abstract = L.localized("Run the system service that keeps the machine's maps and gate (system mode; systemd starts it)")
    static let discussion = L.localized("""
        Takes the commands of every user of the machine on its socket and runs them as its own
        user, with its own data directory, gate record and clock. Runs as the managed policy's
        systemUser only; systemd hands it its socket (mapgate-system.socket), else it listens at
        --socket or the policy's systemSocket. Runs until stopped.
        """)
    static let options = [
        OptionSpec(name: "socket", value: "PATH", help: L.localized("listen here (default: the socket systemd hands over, else the policy's systemSocket)")),
        OptionSpec(name: "admin-group", value: "GROUP", help: L.localized("the group whose members may change the machine's maps (default mapgate)")),
    ]

    let socketPath: String?
    let administratorGroup: String

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
        socketPath = arguments.value("socket")
        administratorGroup = arguments.value("admin-group") ?? SystemAccess.administratorGroupName
    }

    func run(_ context: Context) throws -> Int32 {
        let settings = try context.gateSettings()
        guard let user = SystemAccount.uid(settings.systemUser), getuid() == user else {
            throw UsageError(
                message: L.localized("the system service runs as the user %1$s (the managed policy's systemUser), not as uid %2$s", settings.systemUser, "\(getuid())"),
                usage: Self.usage)
        }
        let path = socketPath ?? settings.systemSocket
        let listener = try LocalSocket.activated(environment: context.environment, path: path) ?? LocalSocket.listen(at: path)
        let console = context.console
        let group = SystemAccount.gid(administratorGroup)
        if group == nil { console.warning(L.localized("no group %1$s: only root may change the machine's maps", administratorGroup)) }
        // The machine's one tile server: started by the first `serve` or `open` session, stopped
        // after the last, on the policy's port, which the service holds between sessions.
        let serverSettings = {
            // The unsent budget and the connection limit, from the memory the service may use.
            var server = ServerMemoryShares.current.applied(to: HTTPServer.Settings())
            server.host = "127.0.0.1"
            server.port = settings.systemTilePort
            return server
        }()
        // Descriptors for the machine's server and, from the start, for the small server that
        // answers its port between sessions (systemd's soft limit is 1,024: a user's flood of
        // silent connections there took them all, and every user's command failed; found by an
        // attack). The small server takes at most a quarter of what is in force.
        // The port as systemd holds it from boot (mapgate-system-tiles.socket), if it is the
        // policy's; else the service binds it when it starts. And `[::1]` at it as systemd holds
        // it (mapgate-system-tiles-ipv6.socket), answered alike; else bound and never listened on.
        let activated = SocketActivation(environment: context.environment)
        let handedPort = Locked(
            Self.activatedTileSocket(named: "tiles", of: "mapgate-system-tiles.socket", host: serverSettings.host, activated, context, settings: serverSettings))
        let handedIPv6 = Self.activatedTileSocket(
            named: "tiles-ipv6", of: "mapgate-system-tiles-ipv6.socket", host: "::1", activated, context, settings: serverSettings)
        // Twice as many when `[::1]` is answered too: each socket has its own connection limit.
        let servers = handedIPv6 == nil ? 1 : 2
        FileDescriptorLimit.raise(
            toAtLeast: servers * (serverSettings.maxConnections + serverSettings.reserveConnections + MachineTileServer.descriptorsBetweenSessions) + 4 * FileDescriptorLimit.reserve)
        // Each start on a context of its own: a context is one thread's.
        let (arguments, environment) = (context.arguments, context.environment)
        let machineServer = MachineTileServer(
            start: { sessions, listener, others in
                try ServerLaunch(Context(arguments: arguments, environment: environment), settings: serverSettings, verbose: false, listener: listener, alsoOn: others)
                    .start(authorization: sessions)
            },
            bind: {
                let handed = handedPort.withLock { handed in
                    defer { handed = nil }
                    return handed
                }
                return try handed ?? HTTPListener(host: serverSettings.host, port: serverSettings.port)
            },
            ipv6: handedIPv6,
            makeGate: { try Context(arguments: arguments, environment: environment).makeGate() },
            log: { console.note($0) })
        var serviceSettings = SystemService.Settings(environment: context.environment, administratorGroup: group, defaultSignals: SignalRouter.routed + [SIGPIPE])
        serviceSettings.administratorGroupName = administratorGroup
        serviceSettings.sessionCommands = SystemAccess.sessionCommands
        serviceSettings.sessionVariable = MachineSession.descriptorVariable
        serviceSettings.session = { socket, caller in machineServer.serve(session: socket, caller: caller) }
        let service = SystemService(
            listener: listener,
            settings: serviceSettings,
            parse: { arguments in
                guard let parsed = try? MapGateCLI.parse(arguments) else { return nil }
                var options = parsed.values
                for flag in parsed.flags { options[flag] = "" }
                return (parsed.command, options, parsed.positional)
            },
            log: { console.note($0) })
        try Threads.detach(name: "service") { service.run() }
        console.note(L.localized("mapgate system service listening at %1$s", path))
        SignalRouter.wait()
        context.console.note(L.localized("stopping…"))
        // The sessions first, by their sockets: each leaves the day its use paid (a stop by the
        // service is no user's choice); then every command left, by a signal.
        machineServer.endSessions()
        service.waitForSessions(within: 5)
        service.stop(grace: 10)
        machineServer.stop()
        return ExitCode.success
    }

    /// A tile port socket activation handed over (the descriptor `name` of the socket unit `unit`:
    /// `tiles`, or `tiles-ipv6` for `[::1]`), when it listens on `host` at the policy's port; one
    /// elsewhere is said and not used.
    private static func activatedTileSocket(
        named name: String, of unit: String, host: String, _ activation: SocketActivation?, _ context: Context, settings: HTTPServer.Settings
    ) -> HTTPListener? {
        guard let descriptor = activation?.descriptor(named: name) else { return nil }
        do {
            let handed = try HTTPListener(adopting: descriptor)
            guard handed.host == host, handed.port == settings.port else {
                context.console.warning(
                    L.localized(
                        "the tile port socket activation handed over listens on %1$s, not on %2$s (the managed policy's systemTilePort): not used; give %3$s the policy's port (systemctl edit)",
                        HTTPListener.endpoint(handed.host, handed.port), HTTPListener.endpoint(host, settings.port), unit))
                return nil
            }
            return handed
        } catch {
            context.console.warning(L.localized("the tile port socket activation handed over cannot be used: %1$s", errorMessage(error)))
            return nil
        }
    }
}
