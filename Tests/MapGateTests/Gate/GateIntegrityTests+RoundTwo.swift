import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Round two of the gate against the user's clock.
extension GateIntegrityTests {
    /// A clock frozen just after a lookup never made the next one due: the grace period lasted
    /// for ever. A reading that has not moved since the last use makes a lookup due.
    @Test func aFrozenClockMakesALookupDue() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        let before = harness.lookups
        #expect(try harness.use() == .grace)
        #expect(harness.lookups == before + 1)
    }

    /// A clock that creeps (a second per run) never reaches the interval: a lookup is due after
    /// `maximumUsesBetweenLookups` uses all the same.
    @Test func lookupsAreDueAfterSoManyUses() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        let before = harness.lookups
        for _ in 1...GatePolicy.maximumUsesBetweenLookups {
            harness.time.advance(seconds: 1)
            #expect(try harness.use() == .grace)
        }
        #expect(harness.lookups == before + 1)
    }

    /// `status`, `/health` and `/metrics` said uses were left while `closeAfterDays` (or the
    /// publisher's minimum version) had closed the gate: one rule now.
    @Test func usesLeftIsZeroWhereverTheGateIsClosed() throws {
        let harness = try GateHarness(closeAfterDays: 10)
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 41)
        let report = try harness.makeGate().status()
        #expect(report.phase == .closed)
        #expect(report.usesLeft == 0)
        let watch = GateWatch()
        watch.update(report, isClosed: true)
        #expect(watch.usesLeft == 0)
    }
}
