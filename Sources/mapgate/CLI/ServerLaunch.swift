import FoundationEssentials
import MapGate

private typealias L = Localization

/// What `serve` and `open` check and bind before the gate counts a use: the settings, the
/// refresh override and the listening socket. `start` then runs the tile server with the use.
struct ServerLaunch {
    let context: Context
    let listener: HTTPListener
    /// More sockets answered alike (system mode's tile port on `[::1]`).
    let otherListeners: [HTTPListener]
    let settings: HTTPServer.Settings
    let verbose: Bool
    let refresh: Double
    /// The mirror `serve --share` offers, or nil.
    let share: MirrorShare?
    /// The most the server keeps of answered tiles (`serve --tile-cache`).
    let tileCacheBytes: Int

    /// Tests shorten the minute between looks at the gate with `MAPGATE_GATE_REFRESH_SECONDS`:
    /// 0.05 to 60 seconds, anything else is an error (0 or less once made the monitor spin).
    static let refreshRange = 0.05...60.0

    /// The override, read only by debug builds (the tests'): a release build has no test hooks.
    private static func refreshOverride(_ environment: [String: String]) -> String? {
        #if DEBUG
        return environment["MAPGATE_GATE_REFRESH_SECONDS"]
        #else
        return nil
        #endif
    }

    init(
        _ context: Context, settings: HTTPServer.Settings, verbose: Bool, share: MirrorShare? = nil,
        tileCacheBytes: Int = TileResponseCache.defaultLimit, listener bound: HTTPListener? = nil, alsoOn others: [HTTPListener] = []
    ) throws {
        self.context = context
        otherListeners = others
        self.share = share
        self.tileCacheBytes = tileCacheBytes
        self.settings = settings
        self.verbose = verbose
        if let text = Self.refreshOverride(context.environment) {
            guard let value = Double(text), Self.refreshRange.contains(value) else {
                throw GeneralFailure(L.localized("MAPGATE_GATE_REFRESH_SECONDS=%1$s: must be a number of seconds from 0.05 to 60", "\(text)"), kind: .usage)
            }
            refresh = value
        } else {
            refresh = 60
        }
        // The regions must be readable before the port is bound and a use counted.
        _ = try context.readOnlyRegionLibrary().installed()
        // Each connection is a descriptor, and some more are the server's own.
        let needed = settings.maxConnections + settings.reserveConnections + FileDescriptorLimit.reserve
        let limit = FileDescriptorLimit.raise(toAtLeast: needed)
        if limit < needed {
            context.console.warning(
                L.localized("the open-file limit is %1$s (hard limit), below the %2$s that --max-connections %3$s needs; past it, connections are refused", "\(limit)", "\(needed)", "\(settings.maxConnections)"))
        }
        listener = try bound ?? HTTPListener(host: settings.host, port: settings.port)
        // The HTTP library must load before a use is reserved for a server that could not start.
        try (settings.library == .h2o ? SharedLibrary.h2o : SharedLibrary.microhttpd).load()
    }

    /// What SIGHUP does to a running server: reads the configuration again and applies its
    /// folders (Leaflet, MapLibre, fonts) without dropping a connection; a configuration that does
    /// not load is said, and the server goes on as it was. The gate's rules are the policy's as it
    /// was at start.
    func reloader(for server: TileServer) -> @Sendable () -> Void {
        let location = context.configurationPath
        let policy = Locations.policyFile(environment: context.environment).path
        let console = context.console
        return {
            do {
                let configuration = try Configuration.load(path: location.path, mustExist: location.mustExist, policyPath: policy)
                server.reload(leafletPath: configuration.leafletPath, maplibrePath: configuration.maplibrePath, fontPaths: configuration.fontPaths)
                console.note(L.localized("reloaded %1$s: serving with its folders; regions are re-read every second", "\(location.path)"))
            } catch {
                console.warning(L.localized("reload: %1$s; still serving with the configuration as it was", "\(MapGateCLI.describe(error))"))
            }
        }
    }

    func start(authorization: any ServingUse) throws -> TileServer {
        let configuration = try context.configuration()
        let gateSettings = try context.gateSettings()
        let directory = context.dataDirectory
        let stateFolder = context.stateFolder
        let console = context.console
        // A held lock must not stall the monitor past its refresh: it then fails closed.
        let busyTimeout = min(10, refresh)
        let makeGate: @Sendable () throws -> Gate = {
            try Gate(store: try GateStore(stateFolder: stateFolder, directory: directory, busyTimeout: busyTimeout), settings: gateSettings)
        }
        let served = TileServer.Configuration(
            http: settings, leafletPath: configuration.leafletPath, maplibrePath: configuration.maplibrePath, fontPaths: configuration.fontPaths,
            share: share, gateRefresh: refresh, tileCacheBytes: tileCacheBytes)
        return try TileServer(
            listener: listener, alsoOn: otherListeners, library: try context.readOnlyRegionLibrary(), authorization: authorization, configuration: served,
            makeGate: makeGate, log: verbose ? RequestLog.write : nil,
            onRegionEvent: { event in
                switch event {
                case .changed(let changes):
                    for id in changes.added { console.note(L.localized("region %1$s installed: now served", "\(id)")) }
                    for id in changes.updated { console.note(L.localized("region %1$s updated: now serving the new file", "\(id)")) }
                    for id in changes.removed { console.note(L.localized("region %1$s removed: now 404", "\(id)")) }
                    for damage in changes.damaged {
                        console.warning(L.localized("region %1$s is damaged: %2$s; answered 500 until mapgate sync %3$s installs it again", "\(damage.id)", "\(damage.reason)", "\(damage.id)"))
                    }
                    for damage in changes.damagedStyles {
                        console.warning(L.localized("style %1$s cannot be served: %2$s; answered 404 until mapgate sync installs it again", "\(damage.id)", "\(damage.reason)"))
                    }
                case .failed(let reason):
                    console.warning(L.localized("cannot re-read the installed regions (%1$s); serving those known", "\(reason)"))
                }
            },
            onGateEvent: { event in
                switch event {
                case .counted(let report, let left):
                    console.prompt(lines: GatePrompt(report: report, usesLeft: left).lines)
                case .lastDay(let report, let until):
                    console.warning(
                        L.localized(
                            "update required: that was the last use; this server serves its last day until %1$s, then refuses (install %2$s)",
                            LocalTime.text(until), report.requiredVersion ?? L.localized("the update")))
                case .closed(let report):
                    console.warning(
                        L.localized("update required: the gate is closed; tiles are now answered 403 (install %1$s)", report.requiredVersion ?? L.localized("the update")))
                case .failing(let reason):
                    console.warning(L.localized("cannot check the update gate (%1$s); tiles are answered 503 until it can", "\(reason)"))
                case .recovered:
                    console.note(L.localized("the update gate can be checked again; serving"))
                case .reopened:
                    console.note(L.localized("the update gate is open again; tiles are answered again"))
                }
            })
    }
}
