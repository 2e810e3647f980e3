import Foundation
import Synchronization

/// A running tile server over the installed regions: the HTTP server, its shared service, and
/// the gate monitor that answers 403 once the gate closes.
public final class TileServer: Sendable {
    public let http: HTTPServer
    public let service: TileService
    private let monitor: GateMonitor

    /// Binds `settings.host:settings.port`, then starts serving. Takes the gate's authorization for
    /// this start (starting is a use): callers that must not count a use for a busy port bind an
    /// ``HTTPListener`` first and use the other initializer.
    public convenience init(
        library: RegionLibrary, authorization: GateAuthorization, settings: HTTPServer.Settings, leafletPath: String,
        gateRefresh: Double = 60, makeGate: @escaping @Sendable () throws -> Gate,
        log: (@Sendable (HTTPServer.LogEntry) -> Void)? = nil,
        onGateEvent: @escaping @Sendable (GateMonitor.Event) -> Void = { _ in }
    ) throws {
        try self.init(
            listener: HTTPListener(host: settings.host, port: settings.port), library: library, authorization: authorization,
            settings: settings, leafletPath: leafletPath, gateRefresh: gateRefresh, makeGate: makeGate, log: log, onGateEvent: onGateEvent)
    }

    /// Starts serving on a bound listener, with a service that is ready before the first request.
    ///
    /// - Parameters:
    ///   - makeGate: opens the gate on the monitor's thread.
    ///   - gateRefresh: seconds between looks at the saved gate state (60 by default).
    public init(
        listener: HTTPListener, library: RegionLibrary, authorization: GateAuthorization, settings: HTTPServer.Settings, leafletPath: String,
        gateRefresh: Double = 60, makeGate: @escaping @Sendable () throws -> Gate,
        log: (@Sendable (HTTPServer.LogEntry) -> Void)? = nil,
        onGateEvent: @escaping @Sendable (GateMonitor.Event) -> Void = { _ in }
    ) throws {
        let watch = GateWatch()
        // The monitor sets the watch from this start's authorization before any request comes.
        let policy = try makeGate().policy
        let monitor = GateMonitor(
            watch: watch, refresh: gateRefresh, policy: policy, start: authorization, makeGate: makeGate, onEvent: onGateEvent)
        let regions = try TileService.loadRegions(from: library)
        let service = TileService(regions: regions, gate: watch, leafletPath: leafletPath, fallbackHost: listener.baseURL)
        let http = HTTPServer(listener: listener, settings: settings, log: log) { TileRequestHandler(service: service) }
        self.http = http
        self.service = service
        self.monitor = monitor
        monitor.start()
    }

    public var baseURL: String { http.baseURL }

    /// Stops the gate monitor, then the server (requests in flight finish).
    public func stop() {
        monitor.stop()
        http.stop()
    }
}
