import FoundationEssentials
import MapGateBase
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Proof that the gate allowed one use. Only ``Gate`` makes these; opening tiles, serving and
/// installing regions take one, so no command can forget the gate.
///
/// A use is counted only when it is *delivered* (docs/gate.md, "What a use is"). The gate
/// reserves it when it makes the authorization: the count is saved before any work starts, so a
/// run killed at any moment has paid for what it did. Whatever hands the result to the user does
/// so through ``deliver(_:)`` (a region or style renamed into place, a tile's first byte written
/// or its file linked in) or ``recordDelivery()`` (a tile answered by a server); the use is then
/// kept. A run that ends without delivering gets the reserved use back (``Gate/settle(_:)``): the
/// faults of the publisher, the network, the disk or a library, and the user's Ctrl-C, cost nothing.
///
/// "Delivered" and "given back" are one atomic decision (``State``): a signal handler that gives
/// the use back while the main thread renames a file into place either comes first (and the
/// rename is not made) or waits for the rename to finish (and the use is kept).
public final class GateAuthorization: Sendable {
    public let decision: UseDecision
    public let report: GateReport
    /// For a server's start: the day of a server that died which this one serves out, with no
    /// use counted (``decision`` is then ``UseDecision/allowed``).
    public let continuedDay: ContinuedServingDay?
    /// Whether the uses of this server keep the day they pay in the record (``GateRecord/servingDays``),
    /// for a server started after this one dies. `serve` and `open` of one's own.
    public let keepsServingDays: Bool
    /// Whether the gate counted a prompted use for this one (what ``Gate/settle(_:)`` may give back).
    public let countedPrompt: Bool
    /// The reservation the record keeps for this use until its delivery is confirmed (see
    /// ``GateRecord/reservations``), or nil when the record keeps none: what an install's pending
    /// record names as paid by it (``GateRecord/recentDeliveries``).
    public let reservationID: String?
    /// For a use an earlier run's delivered use pays (``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``):
    /// that use, renewed under this name as this one was allowed, so that it is this run's alone.
    public let paidByEarlier: String?
    /// Removes that reservation from the record (on a store of its own: any thread may deliver),
    /// unless the deadline it is given (``MonotonicClock/seconds``) has passed when the record's
    /// write lock is had: then nothing is written (``GateDeliveryLateError``).
    private let confirmation: (@Sendable (_ deadline: Double?) throws -> Void)?
    /// Whether the record was told of the delivery (``confirmation`` ran).
    private let confirmed = Atomic<Bool>(false)
    public var isConfirmed: Bool { confirmed.load(ordering: .acquiring) }
    /// Whether ``Gate/settle(_:)`` gave the use back: nothing was counted.
    private let givenBack = Atomic<Bool>(false)
    private let state = Atomic<UInt8>(State.reserved.rawValue)
    /// Whether the server's paid day stays in the record for the next server when it ends.
    private let leavesDay = Atomic<Bool>(false)

    /// Where the use stands. Every change is one compare-and-exchange.
    enum State: UInt8 {
        /// Counted, nothing handed over yet: may be delivered or given back.
        case reserved
        /// A delivery step is running (``deliver(_:)``): it ends delivered or reserved again.
        case delivering
        /// Handed to the user: kept.
        case delivered
        /// ``Gate/settle(_:)`` is giving it back (writing the record).
        case givingBack
        /// Given back (or the give-back failed and the use stays counted): nothing more happens.
        case settled
    }

    init(
        decision: UseDecision, report: GateReport, reservationID: String? = nil, continuedDay: ContinuedServingDay? = nil,
        keepsServingDays: Bool = false, paidByEarlier: String? = nil, confirmation: (@Sendable (_ deadline: Double?) throws -> Void)? = nil
    ) {
        self.paidByEarlier = paidByEarlier
        self.decision = decision
        self.report = report
        self.continuedDay = continuedDay
        self.keepsServingDays = keepsServingDays
        self.reservationID = reservationID
        self.confirmation = confirmation
        if case .prompt = decision { countedPrompt = true } else { countedPrompt = false }
    }

    /// Runs `step`, the act that hands the use's result to the user (a rename into place, the
    /// first byte of a write), as the delivery: when it returns, the use is delivered and kept;
    /// when it throws, the use is reserved again (and given back at the end unless something else
    /// delivers it), except for a ``DeliveredAnywayError``, which keeps it. Throws ``GateUseWithdrawnError`` without running `step` when the use was
    /// already given back (a signal handler did, and the process is ending): nothing may reach the
    /// user after that.
    ///
    /// Before `step` runs the first time, the record is told (its reservation removed), so that a
    /// process killed during or after `step` keeps the use; a failure to tell it throws, and
    /// `step` does not run. Several threads may deliver at once (a server's first tiles): one
    /// decides, the others wait for it.
    public func deliver<T>(_ step: () throws -> T) throws -> T {
        try deliver(before: nil, step)
    }

    /// ``deliver(_:)`` for one who stops waiting at `deadline` (``MonotonicClock/seconds``; the
    /// machine's tile server, for a session's use): a record that cannot be told before then (its
    /// state database busy that long) is left as it was, `step` does not run and
    /// ``GateDeliveryLateError`` is thrown, so that a use is never kept for an answer nobody waits
    /// for any more.
    public func deliver<T>(before deadline: Double?, _ step: () throws -> T) throws -> T {
        while true {
            let (claimed, found) = state.compareExchange(
                expected: State.reserved.rawValue, desired: State.delivering.rawValue, ordering: .acquiringAndReleasing)
            if claimed { break }
            if found == State.delivered.rawValue { return try step() }  // delivered before: nothing to decide
            guard found == State.delivering.rawValue else { throw GateUseWithdrawnError() }
            usleep(500)
        }
        do {
            if let confirmation, !confirmed.load(ordering: .acquiring) {
                try confirmation(deadline)
                confirmed.store(true, ordering: .releasing)
            }
            let result = try step()
            state.store(State.delivered.rawValue, ordering: .releasing)
            return result
        } catch let error as DeliveredAnywayError {
            state.store(State.delivered.rawValue, ordering: .releasing)
            throw error.underlying
        } catch {
            state.store(State.reserved.rawValue, ordering: .releasing)
            throw error
        }
    }

    /// Says that the use was delivered (a server answered a tile): from now on it is kept. Any
    /// thread may call it; after a give-back it changes nothing.
    public func recordDelivery() {
        guard !isDelivered else { return }  // every tile after the first: one load
        // As a delivery step that does nothing: the record is told too. After a give-back (or when
        // the record cannot be told) nothing changes, and the use is given back at the end.
        _ = try? deliver {}
    }

    /// Whether the use was delivered.
    public var isDelivered: Bool { state.load(ordering: .acquiring) == State.delivered.rawValue }

    /// Says that the server ends by no choice of the user's (its terminal hung up: a window that
    /// crashed, an ssh connection dropped): the day it paid stays in the record for the next
    /// server, as when it dies (found by an attack: a dropped connection cost the next start a use).
    public func leaveServingDay() {
        leavesDay.store(true, ordering: .releasing)
    }

    /// Whether ``leaveServingDay()`` was said.
    var leavesServingDay: Bool { leavesDay.load(ordering: .acquiring) }

    /// Whether the use counted for the prompt was given back (``Gate/settle(_:)``): nothing was counted.
    public var wasGivenBack: Bool { givenBack.load(ordering: .acquiring) }

    func markGivenBack() {
        givenBack.store(true, ordering: .releasing)
    }

    /// Takes the right to give the use back: true exactly once, and only while nothing was
    /// delivered. A delivery step under way is waited for (it is one rename or one write of a
    /// byte), at most `patience` seconds: past that it counts as delivered. A give-back under way
    /// elsewhere is waited for the same way, so that the process does not end in the middle of it.
    func beginGivingBack(patience: Double = 5) -> Bool {
        let deadline = MonotonicClock.seconds + patience
        while true {
            let (taken, found) = state.compareExchange(
                expected: State.reserved.rawValue, desired: State.givingBack.rawValue, ordering: .acquiringAndReleasing)
            if taken { return true }
            let busy = found == State.delivering.rawValue || found == State.givingBack.rawValue
            guard busy, MonotonicClock.seconds < deadline else { return false }
            usleep(1_000)
        }
    }

    /// Ends a give-back begun with ``beginGivingBack(patience:)``.
    func endGivingBack() {
        state.store(State.settled.rawValue, ordering: .releasing)
    }
}
