import FoundationEssentials
import MapGateBase
import MapGateTrust
import Synchronization

/// A `serve` or `open` run in system mode, as the command the system service runs for a user
/// (issue 36): instead of a server of its own it attaches to the machine's (``MachineTileServer``)
/// on the socket the service gave it, once its use is reserved, and delivers that use when the
/// server asks (before the tile that shows it). It lives as long as the command's run.
public final class MachineSession: Sendable {
    /// The machine's tile server, no trailing slash.
    public let url: String
    /// How many regions it serves.
    public let regions: Int
    private let socket: LocalSocket
    private let endReason = Locked<String?>(nil)

    /// The environment variable that names the session's descriptor to the command.
    public static let descriptorVariable = "MAPGATE_MACHINE_SESSION_FD"

    /// Attaches on `socket` and waits for the server (which may have to start: at most `timeout`
    /// seconds). Then a thread of its own answers the server: `deliver` delivers the use (the
    /// gate's record is told) before the deadline it is given (``MonotonicClock/seconds``: a
    /// second before the server stops waiting for the answer), or not at all; when the server
    /// ends the session, or a delivery fails, `ended` runs with the reason (on that thread).
    ///
    /// - Parameter continuing: the day of this user's session that ended when the service died,
    ///   which this one serves out with no use (``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``).
    public init(
        socket: LocalSocket, timeout: Double = 60, continuing: ContinuedServingDay? = nil, deliver: @escaping @Sendable (_ deadline: Double) throws -> Void,
        ended: @escaping @Sendable (_ reason: String) -> Void
    ) throws {
        self.socket = socket
        let attach = continuing.map { MachineSessionMessage.attachContinuing(count: $0.count, paidAt: $0.paidAt.timeIntervalSince1970, served: $0.served) }
        try (attach ?? .attach).send(on: socket)
        switch try MachineSessionMessage.receive(on: socket, timeout: timeout) {
        case .ready(let url, let regions):
            self.url = url
            self.regions = regions
        case .refused(let reason):
            throw MachineSessionError(reason: reason)
        default:
            throw MachineSessionError(reason: L.localized("it answered out of turn"))
        }
        let endReason = endReason
        try Threads.detach(name: "machine-session") {
            var reason = L.localized("the system service ended the session")
            while let message = try? MachineSessionMessage.receive(on: socket, timeout: .infinity) {
                guard case .deliver(let askedAt, let within) = message else { continue }
                // Asked too long ago (this command was stopped meanwhile): the server has given
                // up on the answer, and nothing is delivered for it. Nor is anything delivered
                // after that time (a busy state database: the use was counted after the server
                // had answered 503).
                let deadline = Double(askedAt) / 1e9 + within - min(1, within / 2)
                guard MonotonicClock.seconds < deadline else { continue }
                do {
                    try deliver(deadline)
                    try MachineSessionMessage.delivered.send(on: socket)
                } catch {
                    reason = errorMessage(error)
                    try? MachineSessionMessage.failed(reason: reason).send(on: socket)
                    break
                }
            }
            endReason.withLock { $0 = reason }
            ended(reason)
        }
    }

    /// Why the server ended the session, or nil while it is open.
    public var ended: String? { endReason.withLock { $0 } }
}
