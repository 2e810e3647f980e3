import Foundation
import Synchronization

/// A running tile server over the installed regions: the HTTP server, its shared service, and
/// the gate monitor that answers 403 once the gate closes.
public final class TileServer: Sendable {
    public let http: HTTPServer
    public let service: TileService
    private let monitor: GateMonitor

    /// Starts serving. Takes the gate's authorization for this start (starting is a use).
    ///
    /// - Parameters:
    ///   - makeGate: opens the gate on the monitor's thread.
    ///   - gateRefresh: seconds between looks at the saved gate state (60 by default).
    public init(
        library: RegionLibrary, authorization: GateAuthorization, settings: HTTPServer.Settings, leafletPath: String,
        gateRefresh: Double = 60, makeGate: @escaping @Sendable () throws -> Gate,
        log: (@Sendable (HTTPServer.LogEntry) -> Void)? = nil,
        onGateChange: @escaping @Sendable (GateReport, UseDecision?) -> Void = { _, _ in }
    ) throws {
        let watch = GateWatch()
        // The monitor sets the watch from this start's authorization before any request comes.
        let monitor = GateMonitor(
            watch: watch, refresh: gateRefresh, start: authorization, makeGate: makeGate, onChange: onGateChange)
        let regions = try TileService.loadRegions(from: library)
        // The service needs the bound port, which exists only once the server listens; handlers
        // read it when their first request comes.
        let box = Mutex<TileService?>(nil)
        let http = try HTTPServer(settings: settings, log: log) {
            TileRequestHandler { box.withLock { $0 } }
        }
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        let service = TileService(regions: regions, gate: watch, leafletPath: leafletPath, fallbackHost: "http://\(host):\(http.port)")
        box.withLock { $0 = service }
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
