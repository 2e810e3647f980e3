import FoundationEssentials
import Synchronization

/// Proof that the gate allowed one use. Only ``Gate`` makes these; opening tiles, serving and
/// installing regions take one, so no command can forget the gate.
///
/// A use is counted only when it is *delivered* (docs/gate.md, "What a use is"). The gate
/// reserves it when it makes the authorization: the count is saved before any work starts, so a
/// run killed at any moment has paid for what it did. Whatever delivers the use calls
/// ``recordDelivery()`` (a region or style installed, a tile written where the user asked, a
/// tile answered by a server); ``Gate/settle(_:)`` then keeps it. A run that ends without
/// delivering gets the reserved use back from ``Gate/settle(_:)``: the faults of the publisher,
/// the network, the disk or a library cost nothing.
public final class GateAuthorization: Sendable {
    public let decision: UseDecision
    public let report: GateReport
    /// Whether the gate counted a prompted use for this one (what ``Gate/settle(_:)`` may give back).
    let countedPrompt: Bool
    private let delivered = Atomic<Bool>(false)
    private let settled = Atomic<Bool>(false)

    init(decision: UseDecision, report: GateReport) {
        self.decision = decision
        self.report = report
        if case .prompt = decision { countedPrompt = true } else { countedPrompt = false }
    }

    /// Says that the use was delivered: from now on it is kept. Any thread may call it.
    public func recordDelivery() {
        delivered.store(true, ordering: .releasing)
    }

    /// Whether ``recordDelivery()`` was called.
    public var isDelivered: Bool { delivered.load(ordering: .acquiring) }

    /// True the first time only: a use is given back at most once.
    func takeSettlement() -> Bool {
        !settled.exchange(true, ordering: .acquiringAndReleasing)
    }
}
