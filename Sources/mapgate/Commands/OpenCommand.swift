import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// `mapgate open REGION`: serve a region and print its viewer page.
struct OpenCommand: Command {
    static let name = "open"
    static let abstract = L.localized("Open a region: serve it and print the URL of its viewer page")
    static let arguments = "REGION"
    static let discussion = L.localized("""
        Checks the update gate (a use, counted once a tile is shown), refuses a region that is not
        installed, starts the local tile server and prints the viewer page's URL. The page works
        offline: raster regions with Leaflet from Debian's libjs-leaflet, vector regions with
        MapLibre GL JS. Runs until Ctrl-C.
        """)
    static let options = [
        OptionSpec(name: "host", value: "ADDRESS", help: L.localized("address to bind (default 127.0.0.1)")),
        OptionSpec(name: "port", short: "p", value: "PORT", help: L.localized("port (default 0: a free one)")),
        OptionSpec(name: "browser", help: L.localized("open the viewer page with xdg-open")),
        OptionSpec(name: "verbose", short: "v", help: L.localized("log each request on stderr")),
    ]

    let region: String
    let settings: HTTPServer.Settings
    let browser: Bool
    let verbose: Bool

    init(parsing arguments: ParsedArguments) throws {
        guard arguments.positional.count == 1 else { throw UsageError(message: L.localized("name one region to open"), usage: Self.usage) }
        region = arguments.positional[0]
        try UsageError.requireRegion(region, usage: Self.usage)
        settings = try ServeCommand.settings(arguments, defaultPort: 0, usage: Self.usage)
        browser = arguments.has("browser")
        verbose = arguments.has("verbose")
    }

    func run(_ context: Context) throws -> Int32 {
        // Everything that can fail is checked (the region, the port) before the gate counts a use.
        // The server answers every installed region, so the gate is asked about each of them, as
        // `serve` asks: a region copied in by hand is refused here as it is there.
        let library = try context.readOnlyRegionLibrary()
        let region = try library.regionID(typed: region)
        _ = try library.region(region)
        if let socket = try MachineSessionLaunch.socket(context) {
            try MachineSessionLaunch.run(context, socket: socket) { session in announce(context, base: session.url, region: region) }
            return ExitCode.success
        }
        let launch = try ServerLaunch(context, settings: settings, verbose: verbose)
        _ = try GateGuard.withUse(context, opening: try library.installed().map(\.id), serving: true) { authorization in
            let server = try launch.start(authorization: authorization)
            let base = NetworkInterfaces.urls(boundHost: settings.host, port: server.http.port, interfaces: [])[0]
            let url = "\(base)/view/\(region)"
            let signal = SignalRouter.wait(onHangUp: launch.reloader(for: server)) {
                announce(context, base: base, region: region)
                if browser {
                    let console = context.console
                    spawnWatched(["xdg-open", url]) { status in
                        guard status != 0 else { return }
                        let why = status.map { L.localized("xdg-open could not start a browser (exit %1$s)", "\($0)") } ?? L.localized("xdg-open could not be run")
                        console.warning(L.localized("%1$s; open %2$s in a browser yourself", "\(why)", "\(url)"))
                    }
                }
            }
            // As `serve`: a terminal gone leaves the paid day for the next server.
            if signal == SIGHUP { authorization.leaveServingDay() }
            context.console.note(L.localized("stopping…"))
            server.stop()
        }
        return ExitCode.success
    }

    /// The viewer page's URL (the command's output) and how long it is served.
    private func announce(_ context: Context, base: String, region: String) {
        if context.json {
            context.console.json(Line(region: region, viewer: "\(base)/view/\(region)", tilejson: "\(base)/\(region).json"))
        } else {
            context.console.data("\(base)/view/\(region)")
            context.console.note(L.localized("serving %1$s until Ctrl-C", "\(region)"))
        }
    }

    /// `open --json`: where the region is served.
    struct Line: Encodable {
        var region: String
        var viewer: String
        var tilejson: String
    }
}
