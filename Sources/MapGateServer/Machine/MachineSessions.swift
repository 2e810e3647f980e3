import Dispatch
import FoundationEssentials
import MapGateBase
import MapGateTrust
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The sessions system mode's tile server is open for (issue 36), and the use its tiles are
/// charged to (``ServingUse``). Each session is a `serve` or `open` run of some user, whose use the
/// gate reserved at the user's prompt; the first tile the server answers after a session attached
/// delivers that session's use (its command tells the gate's record), as a server of its own
/// would at its first tile. So every session costs one use once a tile is shown, none when it
/// ends before; and the server answers tiles only while a session whose use was delivered is open.
public final class MachineSessions: ServingUse {
    /// One session: its socket, and the answer to the delivery asked of it.
    final class Session: Sendable {
        let id: Int
        /// Written by delivery rounds (one at a time) and read by the session's own thread:
        /// a socket is full-duplex, and each direction has one user.
        let socket: LocalSocket
        let answers = Locked<[MachineSessionMessage]>([])
        let answered = DispatchSemaphore(value: 0)

        init(id: Int, socket: LocalSocket) {
            self.id = id
            self.socket = socket
        }

        /// Asks the session's command to deliver its use and waits for its answer.
        func deliver(timeout: Double) throws {
            try MachineSessionMessage.deliver(askedAt: MonotonicClock.nanoseconds, within: timeout).send(on: socket)
            guard answered.wait(timeout: .now() + timeout) == .success else {
                throw MachineSessionError(reason: L.localized("the session did not answer"))
            }
            switch answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            case .delivered?: return
            case .failed(let reason)?: throw MachineSessionError(reason: reason)
            default: throw MachineSessionError(reason: L.localized("the session ended"))
            }
        }
    }

    private struct Entry {
        var session: Session
        var isDelivered: Bool
    }

    public let report: GateReport
    public var decision: UseDecision { .allowed }
    /// `promptsShown` right after the newest session's prompted use (``noteSession(_:)``).
    private let ownUses = Locked<Int?>(nil)
    public var ownCount: Int? { ownUses.withLock { $0 } }
    private let entries = Locked<[Int: Entry]>([:])
    private let everyDelivered = Atomic<Bool>(false)
    /// One delivery round at a time: tiles answered at once wait for the one that asks.
    private let rounds = PthreadLock()
    /// How long a session's command has to deliver.
    let answerTimeout: Double

    /// - Parameter report: the gate when the server started, for its monitor.
    init(report: GateReport, answerTimeout: Double = 10) {
        self.report = report
        self.answerTimeout = answerTimeout
        noteSession(report)
    }

    /// A session is attaching, `report` the gate as its command left it: a use reserved in it (the
    /// session's prompted use, reserved at its user's prompt and delivered at the next tile) is
    /// the server's own, so that the last use runs its day here as it does on a server of one's own.
    func noteSession(_ report: GateReport) {
        guard !report.record.reservations.isEmpty else { return }
        let count = report.record.promptsShown
        ownUses.withLock { $0 = max($0 ?? count, count) }
    }

    public var isDelivered: Bool { everyDelivered.load(ordering: .acquiring) }

    public func deliver() throws {
        rounds.lock()
        defer { rounds.unlock() }
        let pending = entries.withLock { $0.values.filter { !$0.isDelivered }.map(\.session) }
        var failures: [String] = []
        for session in pending {
            do {
                try session.deliver(timeout: answerTimeout)
                entries.withLock { $0[session.id]?.isDelivered = true }
            } catch {
                // Its command ends with the reason; the server no longer counts on it.
                // Its reason alone: the error thrown below names the server once (found by an
                // attack: "the machine's tile server: the machine's tile server: …").
                failures.append((error as? MachineSessionError)?.reason ?? errorMessage(error))
                remove(session.id)
                session.socket.shutDown()
            }
        }
        refresh()
        guard entries.withLock({ $0.values.contains { $0.isDelivered } }) else {
            throw MachineSessionError(reason: failures.first ?? L.localized("no 'mapgate serve' or 'mapgate open' is running"))
        }
    }

    /// Every session open now.
    var count: Int { entries.withLock { $0.count } }

    func add(_ session: Session) {
        entries.withLock { $0[session.id] = Entry(session: session, isDelivered: false) }
        refresh()
    }

    func remove(_ id: Int) {
        entries.withLock { _ = $0.removeValue(forKey: id) }
        refresh()
    }

    private func refresh() {
        let all = entries.withLock { !$0.isEmpty && $0.values.allSatisfy(\.isDelivered) }
        everyDelivered.store(all, ordering: .releasing)
    }
}

/// A session that could not deliver its use, or none to charge a tile to.
public struct MachineSessionError: MapGateFailure, LocalizedError {
    public var reason: String
    public var kind: FailureKind { .unavailable }
    public var errorDescription: String? { L.localized("the machine's tile server: %1$s", reason) }
}
