import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// What system mode's one tile server per machine (``MachineTileServer``) and a `serve` or `open`
/// session (``MachineSession``) say to each other, one framed JSON message at a time on the
/// socket pair the system service gives the session's command (issue 36).
public enum MachineSessionMessage: Codable, Sendable, Equatable {
    /// Session to server: my use is reserved (the user answered the prompt); serve.
    case attach
    /// Session to server: I serve out the day a session of my user paid before the service died
    /// (``ContinuedServingDay``: `count` its use's, `paidAt` in seconds since 1970, `served` seconds
    /// of it gone); nothing to deliver.
    case attachContinuing(count: Int, paidAt: Double, served: Double)
    /// Server to session: serving at `url` (no trailing slash), `regions` of them.
    case ready(url: String, regions: Int)
    /// Server to session: it cannot serve (the port is taken, the regions cannot be read).
    case refused(reason: String)
    /// Server to session: a tile is about to be answered; deliver the use first. `askedAt` (the
    /// boot clock's nanoseconds) and `within` (seconds) say how long the server waits for the
    /// answer: past that it has answered the tile's client 503 and ended the session, and a
    /// delivery would charge the user for a tile nobody got (found by an attack: a session
    /// stopped with Ctrl-Z, then continued, delivered a request its server had given up on).
    case deliver(askedAt: UInt64, within: Double)
    /// Session to server: the use is delivered (the gate's record was told).
    case delivered
    /// Session to server: the use cannot be delivered (the gate closed, the record cannot be told).
    case failed(reason: String)

    /// The most a message may be.
    static let sizeLimit = 16_384

    func send(on socket: LocalSocket) throws {
        try socket.send(try JSONEncoder().encode(self))
    }

    /// The next message, waiting at most `timeout` seconds; throws at the end of the stream.
    static func receive(on socket: LocalSocket, timeout: Double) throws -> MachineSessionMessage {
        let message = try socket.receive(limit: sizeLimit, maximumDescriptors: 0, timeout: timeout)
        message.descriptors.forEach { close($0) }
        return try JSONDecoder().decode(MachineSessionMessage.self, from: message.body)
    }
}
