import FoundationEssentials

/// Proof that the gate allowed one use. Only ``Gate`` makes these; opening tiles, serving and
/// installing regions take one, so no command can forget the gate.
public struct GateAuthorization: Sendable {
    public let decision: UseDecision
    public let report: GateReport

    init(decision: UseDecision, report: GateReport) {
        self.decision = decision
        self.report = report
    }
}
