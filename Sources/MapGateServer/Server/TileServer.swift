import FoundationEssentials
import MapGateTrust
import MapGateWorkflows
import Synchronization

/// A running tile server over the installed regions: the HTTP layer, the shared tile service
/// on top of it, the gate monitor that answers 403 once the gate closes, and the watcher that
/// keeps the regions current.
public final class TileServer: Sendable {
    public let http: HTTPServer
    public let service: TileService
    private let monitor: GateMonitor

    #if DEBUG
    /// How many looks at the gate the server's monitor has finished (``GateMonitor/looks``). For the
    /// tests: debug builds only.
    public var gateLooks: Int { monitor.looks }
    #endif
    private let watcher: RegionWatcher

    /// What a tile server serves and how (as martin's `SrvConfig`): everything but the regions,
    /// the use it starts with and the callbacks.
    public struct Configuration: Sendable {
        /// Host, port and limits; without a host policy, the server answers loopback names and
        /// the bound host.
        public var http: HTTPServer.Settings
        /// Leaflet's and MapLibre's folders (the viewer pages' scripts) and the fonts' folders.
        public var leafletPath: String
        public var maplibrePath: String
        public var fontPaths: [String]
        /// `serve --share`: the mirror served beside the tiles.
        public var share: MirrorShare?
        /// Seconds between looks at the saved gate state (60 by default).
        public var gateRefresh: Double
        /// Seconds between looks at the installed regions (1 by default).
        public var regionRefresh: Double
        /// Memory for tile answers kept and sent again (``TileResponseCache``); 0 keeps none.
        public var tileCacheBytes: Int

        public init(
            http: HTTPServer.Settings = HTTPServer.Settings(), leafletPath: String, maplibrePath: String = MapLibreFiles.localPath,
            fontPaths: [String] = [], share: MirrorShare? = nil, gateRefresh: Double = 60, regionRefresh: Double = 1,
            tileCacheBytes: Int = TileResponseCache.defaultLimit
        ) {
            self.http = http
            self.leafletPath = leafletPath
            self.maplibrePath = maplibrePath
            self.fontPaths = fontPaths
            self.share = share
            self.gateRefresh = gateRefresh
            self.regionRefresh = regionRefresh
            self.tileCacheBytes = tileCacheBytes
        }
    }

    /// Binds `configuration.http`'s host and port, then starts serving. Takes the use of this
    /// start (the gate's authorization, or system mode's sessions), which the first tile answered
    /// delivers: callers that must not reserve a use for a busy port bind an ``HTTPListener``
    /// first and use the other initializer.
    public convenience init(
        library: RegionLibrary, authorization: any ServingUse, configuration: Configuration,
        makeGate: @escaping @Sendable () throws -> Gate,
        log: (@Sendable (HTTPServer.LogEntry) -> Void)? = nil,
        onRegionEvent: @escaping @Sendable (RegionWatcher.Event) -> Void = { _ in },
        onGateEvent: @escaping @Sendable (GateMonitor.Event) -> Void = { _ in }
    ) throws {
        try self.init(
            listener: HTTPListener(host: configuration.http.host, port: configuration.http.port), library: library, authorization: authorization,
            configuration: configuration, makeGate: makeGate, log: log, onRegionEvent: onRegionEvent, onGateEvent: onGateEvent)
    }

    /// Starts serving on a bound listener, with a service that is ready before the first request.
    ///
    /// - Parameters:
    ///   - others: more listening sockets answered alike (``HTTPServer/init(listener:alsoOn:settings:gauge:log:makeHandler:)``).
    ///   - makeGate: opens the gate on the monitor's thread.
    ///   - log: every answer, rejections included (`serve --verbose`).
    public init(
        listener: HTTPListener, alsoOn others: [HTTPListener] = [], library: RegionLibrary, authorization: any ServingUse, configuration: Configuration,
        makeGate: @escaping @Sendable () throws -> Gate,
        log: (@Sendable (HTTPServer.LogEntry) -> Void)? = nil,
        onRegionEvent: @escaping @Sendable (RegionWatcher.Event) -> Void = { _ in },
        onGateEvent: @escaping @Sendable (GateMonitor.Event) -> Void = { _ in }
    ) throws {
        let gateRefresh = configuration.gateRefresh
        let watch = GateWatch(lifetime: GateWatch.lifetime(forRefresh: gateRefresh))
        // The monitor sets the watch from this start's authorization before any request comes.
        let policy = try makeGate().policy
        let (regions, damaged) = try TileService.loadRegions(from: library)
        if !damaged.isEmpty { onRegionEvent(.changed(TileService.Changes(damaged: damaged))) }
        let metrics = ServerMetrics()
        let service = TileService(
            regions: regions, damaged: damaged, styles: [], gate: watch, leafletPath: configuration.leafletPath, maplibrePath: configuration.maplibrePath, fallbackHost: listener.baseURL, metrics: metrics,
            glyphs: GlyphService(folders: configuration.fontPaths + FontLibrary.systemFolders),
            tileCache: TileResponseCache(limit: configuration.tileCacheBytes), share: configuration.share,
            startUse: authorization)
        // The styles are read as the watcher re-reads them, so a damaged one is said once, here.
        let damagedStyles = service.refreshStyles(in: library.directory)
        if !damagedStyles.isEmpty { onRegionEvent(.changed(TileService.Changes(damagedStyles: damagedStyles))) }
        let monitor = GateMonitor(
            watch: watch, refresh: gateRefresh, policy: policy, start: authorization, makeGate: makeGate,
            servedRegions: { Array(service.regions.keys) }, onEvent: onGateEvent)
        var settings = configuration.http
        if settings.hostPolicy == nil { settings.hostPolicy = HTTPHostPolicy(boundHost: listener.host) }
        let http = try HTTPServer(listener: listener, alsoOn: others, settings: settings, gauge: metrics.connections) { entry in
            // The route travels with the answer; only what the HTTP layer refused itself is named from its path.
            let route = entry.label ?? TileRequestHandler.route(of: entry.path)
            if route == "tile", entry.method != "HEAD", entry.status == 200 || entry.status == 304 {
                // A tile answered delivers the start's use (kept, not given back at the end). A
                // HEAD sends no tile byte (a link checker, a client probing): it delivers nothing.
                if !authorization.isDelivered { try? authorization.deliver() }
                watch.recordTileAnswered()
            }
            metrics.record(route: route, status: entry.status, bytes: entry.bytes, seconds: entry.seconds)
            log?(entry)
        } makeHandler: {
            TileRequestHandler(service: service)
        }
        self.http = http
        self.service = service
        self.monitor = monitor
        watcher = RegionWatcher(service: service, directory: library.directory, pins: library.pins, interval: configuration.regionRefresh) { event in
            // The pool's idle workers would keep a removed or replaced file open (its disk space
            // held) until each next answers a request; those answering now close it after.
            if case .changed(let changes) = event, !(changes.removed.isEmpty && changes.updated.isEmpty && changes.damaged.isEmpty && changes.reopened.isEmpty) {
                http.discardIdleHandlers()
            }
            onRegionEvent(event)
        }
        do {
            try monitor.start()
            try watcher.start()
        } catch {
            stop()
            throw error
        }
    }

    public var baseURL: String { http.baseURL }

    /// Applies a reloaded configuration (SIGHUP) without dropping a connection: Leaflet's,
    /// MapLibre's and the fonts' folders. The regions need no reload: the watcher re-reads them
    /// every second.
    public func reload(leafletPath: String, maplibrePath: String, fontPaths: [String]) {
        service.reconfigure(leafletPath: leafletPath, maplibrePath: maplibrePath, glyphs: GlyphService(folders: fontPaths + FontLibrary.systemFolders))
    }

    /// A server nobody holds any more stops its threads (its watchers poll otherwise for as long as
    /// the process lives), as ``HTTPServer`` does.
    deinit {
        stop()
    }

    /// Has the gate monitor look at the gate now (a use joined the server: ``ServingUse/ownCount``).
    public func lookAtGateNow() {
        monitor.lookNow()
    }

    /// Stops the watchers, then the server. Idempotent.
    public func stop() {
        watcher.stop()
        monitor.stop()
        http.stop()
    }
}
