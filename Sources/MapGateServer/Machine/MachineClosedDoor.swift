import FoundationEssentials

/// What system mode's tile port answers while no session is open (``MachineTileServer``): every
/// request gets 503 saying so, and the connection is closed. The service holds the port between
/// sessions so that no user can bind it meanwhile (a user who did made every other user's `serve`
/// and `open` fail, and answered at the machine's address: found by an attack); a port held with
/// nobody answering made clients wait for ever instead.
final class MachineClosedDoor: HTTPRequestHandler {
    /// The most connections it answers at once, when the open-file limit allows (a quarter of it),
    /// and the few more it takes only to refuse.
    static let mostConnections = 1024
    static let reserveConnections = 16

    static let message = "no map session is open on this machine: run mapgate open or mapgate serve\n"
    private static let body = Data(message.utf8)
    /// `/health` as JSON, status `no-session`: a viewer page left open past its session says so
    /// in its own language instead of "not answering".
    static let health: Data = {
        struct Health: Encodable {
            let status = "no-session"
            let message = String(MachineClosedDoor.message.dropLast())  // without its newline
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(Health())) ?? Data()
    }()

    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let isHealth = request.path == "/health"
        var response = HTTPServerResponse(
            status: 503,
            headers: [
                ("Content-Type", isHealth ? "application/json" : "text/plain; charset=utf-8"), ("Cache-Control", "no-store"), ("Retry-After", "5"),
            ],
            body: isHealth ? Self.health : Self.body, closesConnection: true)
        response.label = "closed"
        return response
    }

    /// The settings of the small server that answers it: one thread, the tile server's own host
    /// allow-list, and a second for a request to come: the answer is one line, and a connection
    /// silent for longer is closed, or after 50 ms when another needs its room. Up to 1,024
    /// connections at once (8 KiB each while open), never more than a quarter of the open-file
    /// limit in force (the service's requests need the rest); past them, connections wait in the
    /// port's backlog, each silent one ahead closed after 50 ms (found by an attack: 300
    /// silent connections, each kept 5 s with room for 64, made every other client wait up to
    /// 10 s; and 1,024 took every descriptor of a service under systemd's limit of 1,024).
    /// With `sockets` answered (127.0.0.1 and `[::1]`), the quarter is theirs together: the
    /// connections admitted are counted once for all, and the reserve once for all on h2o (on
    /// libmicrohttpd each socket's daemon keeps its own reserve on top).
    static func settings(for listener: HTTPListener, sockets: Int = 1, openFileLimit: Int = FileDescriptorLimit.current) -> HTTPServer.Settings {
        var settings = HTTPServer.Settings()
        settings.host = listener.host
        settings.port = listener.port
        settings.threads = 1
        settings.maxConnections = max(16, min(mostConnections, (openFileLimit - 4 * FileDescriptorLimit.reserve) / 4 / max(1, sockets)))
        settings.reserveConnections = reserveConnections
        settings.idleTimeout = 1
        settings.readTimeout = 1
        // At capacity, one silent for 50 ms makes room: a client writes as it connects, and a
        // reconnecting flood made a client that asks wait behind thousands in the port's backlog,
        // each closed only after half a second (found by an attack: /health took 3.7 to 9 s).
        settings.evictableAfter = 0.05
        settings.hostPolicy = HTTPHostPolicy(boundHost: listener.host)
        return settings
    }
}
