@testable import MapGateServer

extension HTTPServer.Settings {
    /// A server's settings on 127.0.0.1, on a port of the kernel's choosing, answering that host.
    static var loopback: Self {
        var settings = Self()
        settings.host = "127.0.0.1"
        settings.port = 0
        settings.hostPolicy = HTTPHostPolicy(boundHost: "127.0.0.1")
        return settings
    }
}
