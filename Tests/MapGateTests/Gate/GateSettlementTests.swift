import Foundation
import MapGate
import TestSupport
import Testing

/// A use is counted only when delivered (issue 25, part 1): the gate reserves it, keeps it once
/// delivered, and gives it back otherwise — once, and only while the update is still pending.
@Suite struct GateSettlementTests {
    let harness: GateHarness

    init() throws {
        harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
    }

    var promptsShown: Int { get throws { try harness.makeGate().status().record.promptsShown } }

    @Test func anUndeliveredUseIsGivenBack() throws {
        let gate = try harness.makeGate()
        let authorization = try gate.authorizeUse()
        #expect(authorization.decision == .prompt(usesLeft: 5))
        // Reserved at once: a run killed now has paid.
        #expect(try promptsShown == 1)
        #expect(try gate.settle(authorization))
        #expect(try promptsShown == 0)
        // Once only.
        #expect(try gate.settle(authorization) == false)
        #expect(try promptsShown == 0)
    }

    @Test func aDeliveredUseIsKept() throws {
        let gate = try harness.makeGate()
        let authorization = try gate.authorizeUse()
        authorization.recordDelivery()
        #expect(try gate.settle(authorization) == false)
        #expect(try promptsShown == 1)
    }

    @Test func useKeepsWhatWorkDeliveredAndGivesBackWhatItDidNot() throws {
        struct Fault: Error {}
        let gate = try harness.makeGate()
        #expect(throws: Fault.self) { try gate.use { _ in throw Fault() } }
        #expect(try promptsShown == 0)
        // Delivered, then a fault: the use stays counted.
        #expect(throws: Fault.self) {
            try gate.use { authorization in
                authorization.recordDelivery()
                throw Fault()
            }
        }
        #expect(try promptsShown == 1)
        #expect(try gate.use { _ in 42 } == 42)  // returned without delivering
        #expect(try promptsShown == 1)
        // The user chose "update now": nothing runs, nothing is counted.
        var ran = false
        #expect(try gate.use(confirm: { _ in false }) { _ in ran = true } == nil)
        #expect(!ran)
        #expect(try promptsShown == 1)
    }

    @Test func theLastUseGivenBackReopensTheGate() throws {
        for _ in 1...4 { try harness.makeGate().authorizeUse().recordDelivery() }
        let gate = try harness.makeGate()
        let last = try gate.authorizeUse()
        #expect(last.decision == .prompt(usesLeft: 1))
        #expect(try harness.phase() == .refused)
        try gate.settle(last)
        #expect(try harness.phase() == .prompt(1))
    }

    @Test func nothingIsGivenBackAfterTheAppWasUpdated() throws {
        let gate = try harness.makeGate()
        let authorization = try gate.authorizeUse()
        // The update is installed while the use runs: the count is reset, not taken below zero.
        #expect(try harness.makeGate(installed: "1.5.0").status().record.promptsShown == 0)
        #expect(try harness.makeGate(installed: "1.5.0").settle(authorization) == false)
        #expect(try harness.makeGate(installed: "1.5.0").status().record.promptsShown == 0)
        _ = gate
    }

    @Test func anAllowedUseHasNothingToGiveBack() throws {
        let fresh = try GateHarness()
        try fresh.serve("1.4.0")
        let gate = try fresh.makeGate()
        let authorization = try gate.authorizeUse()
        #expect(authorization.decision == .allowed)
        #expect(try gate.settle(authorization) == false)
    }

    // MARK: Issue 35: "delivered" and "given back" are one decision

    /// A give-back that comes while a delivery step runs waits for it: the step ends delivered,
    /// and the use is kept.
    @Test func aGiveBackWaitsForADeliveryUnderWay() throws {
        let gate = try harness.makeGate()
        let authorization = try gate.authorizeUse()
        let inStep = DispatchSemaphore(value: 0)
        let delivering = Thread {
            _ = try? authorization.deliver {
                inStep.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        delivering.start()
        inStep.wait()
        #expect(try gate.settle(authorization) == false)
        #expect(authorization.isDelivered)
        #expect(try promptsShown == 1)
    }

    /// After a give-back nothing may be delivered: the step does not run.
    @Test func nothingIsDeliveredAfterAGiveBack() throws {
        let gate = try harness.makeGate()
        let authorization = try gate.authorizeUse()
        #expect(try gate.settle(authorization))
        var ran = false
        #expect(throws: GateUseWithdrawnError.self) { try authorization.deliver { ran = true } }
        #expect(!ran)
        #expect(try promptsShown == 0)
    }

    /// A delivery step that fails leaves the use reserved (given back at the end); one that failed
    /// after its result reached the user (``DeliveredAnywayError``) keeps it.
    @Test func aFailedDeliveryStepIsNotADelivery() throws {
        struct Fault: Error {}
        let gate = try harness.makeGate()
        #expect(throws: Fault.self) { try gate.use { try $0.deliver { throw Fault() } } }
        #expect(try promptsShown == 0)
        #expect(throws: Fault.self) { try gate.use { try $0.deliver { throw DeliveredAnywayError(Fault()) } } }
        #expect(try promptsShown == 1)
    }

    /// A prompt left unanswered (``PromptUnansweredError`` from `confirm`): nothing runs, the use
    /// is given back.
    @Test func anUnansweredPromptRunsNothingAndCountsNothing() throws {
        let gate = try harness.makeGate()
        var ran = false
        #expect(throws: PromptUnansweredError.self) {
            try gate.use(confirm: { _ in throw PromptUnansweredError() }) { _ in ran = true }
        }
        #expect(!ran)
        #expect(try promptsShown == 0)
    }

    /// `reserving` runs the reservation (a caller holds its signal handler's lock around it).
    @Test func theReservationRunsInsideReserving() throws {
        let gate = try harness.makeGate()
        var inside = -1
        _ = try gate.use(reserving: { reserve in
            let authorization = try reserve()
            inside = try promptsShown
            return authorization
        }) { $0.recordDelivery() }
        #expect(inside == 1)
    }
}
