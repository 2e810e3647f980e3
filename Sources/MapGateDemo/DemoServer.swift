import MapGate

/// The tile server the demo ends with, and the demo's origin, which runs as long as it does.
public final class DemoServer: Sendable {
    public let tiles: TileServer
    private let origin: TestOrigin

    init(tiles: TileServer, origin: TestOrigin) {
        self.tiles = tiles
        self.origin = origin
    }

    public var baseURL: String { tiles.baseURL }

    /// Stops the server, then the origin.
    public func stop() {
        tiles.stop()
        origin.stop()
    }
}
