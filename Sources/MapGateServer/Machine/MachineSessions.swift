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
        /// `promptsShown` right after the session's prompted use while it is reserved (nil once
        /// delivered, or for a use that was not prompted).
        var pendingCount: Int?
    }

    public let report: GateReport
    public var decision: UseDecision { .allowed }
    /// `promptsShown` right after the newest prompted use delivered here: the first session's
    /// (``init(report:answerTimeout:)``), then each later session's once a tile delivered it. A
    /// session's use counts as the server's own only then: one that ended before any tile gave
    /// its use back, and its day must not run (found by an attack: a second `serve` started and
    /// stopped before any tile, shortly before each day of serving ended, restarted the day, so
    /// one use served tiles for days).
    private let ownUses = Locked<Int?>(nil)
    public var ownCount: Int? { ownUses.withLock { $0 } }
    public var pendingCount: Int? { entries.withLock { $0.values.compactMap(\.pendingCount).max() } }
    private let entries = Locked<[Int: Entry]>([:])
    private let everyDelivered = Atomic<Bool>(false)
    private let someDelivered = Atomic<Bool>(false)
    public var hasDelivered: Bool { someDelivered.load(ordering: .acquiring) }
    /// One delivery round at a time: tiles answered at once wait for the one that asks.
    private let rounds = PthreadLock()
    /// How long a session's command has to deliver.
    let answerTimeout: Double

    /// The day of a session that ended when the service died (or its terminal hung up), which a
    /// session of its user serves out here (``ContinuedServingDay``): the server's day runs from
    /// that one's payment, until a later session's use is delivered (its day then runs from that
    /// delivery). Of several, the one paid last (found by an attack: the first one's, which ended
    /// earlier, cut the day another user's session had been told it had).
    private let continued = Locked<ContinuedServingDay?>(nil)
    public var continuedDay: ContinuedServingDay? { continued.withLock { $0 } }

    /// - Parameter report: the gate when the server started, for its monitor.
    init(report: GateReport, answerTimeout: Double = 10) {
        self.report = report
        self.answerTimeout = answerTimeout
        noteSession(report)
    }

    /// The first session, `report` the gate as its command left it: a use reserved in it (its
    /// prompted use, delivered at the server's first tile) is the server's own from the start, as
    /// on a server of one's own, whose day runs from that tile.
    private func noteSession(_ report: GateReport) {
        guard let count = Self.reservedCount(report) else { return }
        ownUses.withLock { $0 = max($0 ?? count, count) }
    }

    /// `promptsShown` right after the prompted use `report` holds reserved, if it holds one.
    private static func reservedCount(_ report: GateReport) -> Int? {
        report.record.reservations.isEmpty ? nil : report.record.promptsShown
    }

    public var isDelivered: Bool { everyDelivered.load(ordering: .acquiring) }

    @discardableResult
    public func deliver() throws -> Bool {
        rounds.lock()
        defer { rounds.unlock() }
        let pending = entries.withLock { $0.values.filter { !$0.isDelivered }.map(\.session) }
        var failures: [String] = []
        var delivered = 0
        for session in pending {
            do {
                try session.deliver(timeout: answerTimeout)
                let count = entries.withLock { entries -> Int? in
                    defer { entries[session.id]?.pendingCount = nil }
                    entries[session.id]?.isDelivered = true
                    return entries[session.id]?.pendingCount
                }
                if let count {
                    ownUses.withLock { $0 = max($0 ?? count, count) }
                    // A use delivered now: the server's day runs from it, no longer from a
                    // continued day's payment.
                    continued.withLock { $0 = nil }
                }
                someDelivered.store(true, ordering: .releasing)
                delivered += 1
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
        // The tile is answered when this round delivered a use (its day starts now), or when
        // nothing failed and a session whose use was delivered is open. A session that failed may
        // be what kept the server open (the use it held the last): with nothing delivered, no tile
        // goes on the other sessions' word (found by attacks: a `serve` stopped with Ctrl-Z failed
        // its round; the tile answered then, and one queued behind it, moved the day for nothing;
        // and an honest session's use delivered in that round started no day).
        guard delivered > 0 || (failures.isEmpty && entries.withLock({ $0.values.contains { $0.isDelivered } })) else {
            throw MachineSessionError(reason: failures.first ?? L.localized("no 'mapgate serve' or 'mapgate open' is running"))
        }
        return delivered > 0
    }

    /// Every session open now.
    var count: Int { entries.withLock { $0.count } }

    /// Ends every session open now: its command sees the end of its socket.
    func endAll() {
        for entry in entries.withLock({ Array($0.values) }) { entry.session.socket.shutDown() }
    }

    /// A session attaching, `report` the gate as its command left it (its use reserved, if prompted).
    /// One that serves out its user's day (`continuing`) has nothing to deliver: no round asks it,
    /// and its empty delivery moves no day (found by reading the change: it started the server's
    /// day again, a free day for every session). Its day is the server's when nothing was
    /// delivered here yet, or when it was paid after the continued day the server runs (found by
    /// an attack: joining a server whose first session had not delivered yet, it froze the day's
    /// start at the monitor's last look, and served a day past its end).
    /// `announce` (the command's `ready`) runs once it is added, before any delivery round can
    /// ask it: a round then waits for both, and a join waits for a round under way (at most its
    /// answer timeout, when a session's command does not answer).
    func add(_ session: Session, report: GateReport, continuing: ContinuedServingDay? = nil, announce: () -> Void = {}) {
        rounds.lock()
        defer { rounds.unlock() }
        if let day = continuing {
            let adopted = continued.withLock { current -> Bool in
                if let current {
                    guard day.paidAt > current.paidAt else { return false }
                } else if someDelivered.load(ordering: .acquiring) {
                    // The server's day runs from a use delivered since the service started, after this one's.
                    return false
                }
                current = day
                return true
            }
            if adopted { ownUses.withLock { $0 = max($0 ?? day.count, day.count) } }
        }
        entries.withLock {
            $0[session.id] = Entry(session: session, isDelivered: continuing != nil, pendingCount: continuing != nil ? nil : Self.reservedCount(report))
        }
        if continuing != nil { someDelivered.store(true, ordering: .releasing) }
        refresh()
        announce()
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
