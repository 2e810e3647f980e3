import Dispatch
import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc

private typealias L = Localization
#endif

/// `mapgate serve`: every installed region over local HTTP.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = L.localized("Serve installed regions over local HTTP (XYZ tiles, TileJSON, viewer)")
    static let discussion = L.localized("""
        Routes: / (region list; JSON with Accept: application/json), /REGION.json (TileJSON 3.0.0),
        /REGION/Z/X/Y.EXT (XYZ tiles), /view/REGION (viewer page), /health, /metrics (Prometheus).

        Binds 127.0.0.1 unless --host says otherwise; answers only requests whose Host is a
        loopback name or address, the bound address, or a name given with --allow-host (else
        421). Regions installed, updated or removed while it runs are served (or 404) within a
        second. Serving is a use of the update gate, counted once the server has answered a tile; a
        running server counts one more use per 24 hours of serving tiles after the grace period
        and answers 403 once the gate closes.

        Stops cleanly on Ctrl-C (SIGINT) or SIGTERM; SIGHUP reloads the configuration (Leaflet,
        MapLibre and font folders) without dropping a connection, unless the terminal it was
        started at has closed (then it stops). A signal ignored when it started (under nohup, or
        a script's '&') stays ignored.

        With --share MIRROR, also offers a mirror written by 'mapgate mirror' at
        /.well-known/mapgate-mirror/ (its catalog, signature, manifest and packages only,
        read-only, byte ranges for resume): on a LAN address (--host), other machines run
        'mapgate sync --from http://THIS-HOST:PORT'.
        """)
    static let options = [
        OptionSpec(name: "host", value: "ADDRESS", help: L.localized("address to bind (default 127.0.0.1)")),
        OptionSpec(name: "port", short: "p", value: "PORT", help: L.localized("port to listen on (default 8080; 0 picks a free one)")),
        OptionSpec(name: "max-connections", value: "N", help: L.localized("connections answered at once (default 10000; then 503)")),
        OptionSpec(name: "allow-host", value: "NAME", help: L.localized("also answer requests for this Host name (repeatable)")),
        OptionSpec(name: "verbose", short: "v", help: L.localized("log each answer on stderr, rejections included")),
        OptionSpec(name: "tile-cache", value: "MB", help: L.localized("memory for answered tiles kept for the next client (default: an eighth of the memory mapgate may use, at most 128; 0: none)")),
        OptionSpec(name: "share", value: "MIRROR", help: L.localized("also offer this mirror (written by 'mapgate mirror') for 'sync --from' on the LAN")),
    ]

    let settings: HTTPServer.Settings
    let verbose: Bool
    let share: String?
    let tileCacheBytes: Int

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
        settings = try Self.settings(arguments, defaultPort: 8080, usage: Self.usage)
        verbose = arguments.has("verbose")
        share = arguments.value("share")
        if let text = arguments.value("tile-cache") {
            guard let megabytes = Int(text), (0...65536).contains(megabytes) else {
                throw UsageError(message: L.localized("--tile-cache %1$s is not a number of megabytes from 0 to 65536", "\(text)"), usage: Self.usage)
            }
            tileCacheBytes = megabytes << 20
        } else {
            tileCacheBytes = TileResponseCache.defaultLimit
        }
    }

    /// The mirror to share, checked before a use is counted: a folder with a catalog.
    private func mirrorShare() throws -> MirrorShare? {
        guard let share else { return nil }
        let folder = PathText.standardized(share.hasPrefix("/") ? share : FileManager.default.currentDirectoryPath + "/" + share)
        var info = stat()
        guard lstat(folder + "/" + MirrorLayout.catalogName, &info) == 0 else {
            throw UsageError(message: L.localized("--share %1$s: not a mirror (no %2$s); write one with 'mapgate mirror %3$s'", "\(share)", "\(MirrorLayout.catalogName)", "\(share)"), usage: Self.usage)
        }
        // What the share serves is regular files only, never through a link (found by an attack:
        // a share whose catalog was a link started, said so, and answered every client 404).
        // And so must its signature be, and `packages/` a folder of its own, when there (found by the
        // attack on that fix: a linked signature or packages folder started a share no client could use).
        for (name, kind) in [(MirrorLayout.catalogName, S_IFREG), (MirrorLayout.catalogName + ".minisig", S_IFREG), (MirrorLayout.packagesFolder, S_IFDIR)] {
            guard lstat(folder + "/" + name, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == kind else {
                let reason =
                    kind == S_IFDIR
                    ? L.localized("--share %1$s: its %2$s is not a folder of its own (a link?), which the share does not serve; write the mirror again with 'mapgate mirror %3$s'", "\(share)", name, "\(share)")
                    : L.localized(
                        "--share %1$s: its %2$s is not a regular file (a link, a FIFO or a device), which the share does not serve; write the mirror again with 'mapgate mirror %3$s'",
                        "\(share)", name, "\(share)")
                throw UsageError(message: reason, usage: Self.usage)
            }
        }
        return MirrorShare(folder: folder)
    }

    static func settings(_ arguments: ParsedArguments, defaultPort: UInt16, usage: String) throws -> HTTPServer.Settings {
        // The unsent budget and the connection limit, from the memory mapgate may use.
        var settings = ServerMemoryShares.current.applied(to: HTTPServer.Settings())
        settings.host = arguments.value("host") ?? "127.0.0.1"
        settings.port = defaultPort
        if let text = arguments.value("port") {
            guard let port = UInt16(text) else { throw UsageError(message: L.localized("--port %1$s is not a port number (0-65535)", "\(text)"), usage: usage) }
            settings.port = port
        }
        if let text = arguments.value("max-connections") {
            guard let count = Int(text), (1...1_000_000).contains(count) else {
                throw UsageError(message: L.localized("--max-connections %1$s is not a number from 1 to 1000000", "\(text)"), usage: usage)
            }
            settings.maxConnections = count
        }
        let extra = arguments.values("allow-host")
        for name in extra where HTTPHostPolicy.hostName(name) == nil || name.contains(":") && !name.hasPrefix("[") {
            throw UsageError(message: L.localized("--allow-host %1$s is not a host name (no port, no scheme)", "\(name)"), usage: usage)
        }
        // Bound to a wildcard or a LAN address, the server is reached by the machine's own
        // addresses: they are allowed as Host too.
        let interfaces = NetworkInterfaces.isLoopback(settings.host) ? [] : NetworkInterfaces.addresses()
        settings.hostPolicy = HTTPHostPolicy(boundHost: settings.host, allowing: extra + interfaces)
        return settings
    }

    func run(_ context: Context) throws -> Int32 {
        if let socket = try MachineSessionLaunch.socket(context) {
            try MachineSessionLaunch.run(context, socket: socket) { session in
                announce(context, count: session.regions, urls: [session.url + "/"])
            }
            return ExitCode.success
        }
        // Bind first, count second: a busy port or a bad setting costs no use.
        let launch = try ServerLaunch(context, settings: settings, verbose: verbose, share: try mirrorShare(), tileCacheBytes: tileCacheBytes)
        if verbose, ServerMemoryShares.current.isReduced, let memory = ServerMemoryShares.memory {
            context.console.note(
                L.localized(
                    "with the %1$s of memory mapgate may use here: at most %2$s of answered tiles kept, %3$s of answers not yet taken by their clients, %4$s connections (--tile-cache and --max-connections set two of them)",
                    ByteCount.text(memory.bytes), ByteCount.text(Int64(tileCacheBytes)), ByteCount.text(Int64(settings.maxUnsentBodyBytes)), "\(settings.maxConnections)"))
        }
        // The use is counted once the server has answered a tile; one stopped before that (or
        // that could not start) gives it back.
        _ = try GateGuard.withUse(context, opening: try context.readOnlyRegionLibrary().installed().map(\.id), serving: true) { authorization in
            let server = try launch.start(authorization: authorization)
            let count = server.service.regions.count
            let urls = NetworkInterfaces.urls(boundHost: settings.host, port: server.http.port, interfaces: NetworkInterfaces.addresses()).map { $0 + "/" }
            let signal = SignalRouter.wait(onHangUp: launch.reloader(for: server)) { announce(context, count: count, urls: urls) }
            // Its terminal gone (a window that crashed, an ssh connection dropped) is no choice of
            // the user's: the day it paid stays for the next server, as when it dies.
            if signal == SIGHUP { authorization.leaveServingDay() }
            context.console.note(L.localized("stopping…"))
            server.stop()
        }
        return ExitCode.success
    }

    /// The "serving at" line(s).
    private func announce(_ context: Context, count: Int, urls: [String]) {
        if context.json {
            context.console.json(Line(url: urls[0], regions: count))
            return
        }
        context.console.print(
            Localization.format(
                Localization.localized("serving %1$s region at %2$s (Ctrl-C to stop)", "serving %1$s regions at %2$s (Ctrl-C to stop)", count: count),
                String(count), urls[0]))
        for url in urls.dropFirst() { context.console.print(L.localized("  also at %1$s", "\(url)")) }
        if share != nil {
            let peers = urls.filter { !$0.contains("127.0.0.1") && !$0.contains("[::1]") && !$0.contains("localhost") }
            context.console.print(
                L.localized("sharing the mirror %1$s: other machines run 'mapgate sync --from %2$s'", "\(TerminalText.inline(share ?? ""))", "\((peers.first ?? urls[0]).dropLast())"))
        }
    }

    /// `serve --json`: where the regions are served.
    struct Line: Encodable {
        var url: String
        var regions: Int
    }
}
