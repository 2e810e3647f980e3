import Foundation
import MapGate
import Testing

/// ``GatePolicy/reconcile(_:at:)``: the app updated opens the gate at once; a pending version that
/// no longer reads as a version fails closed (issue 35), never open.
@Suite struct GatePolicyReconcileTests {
    let policy = GatePolicy(installed: try! AppVersion("1.5.0"))

    func record(pending: String) -> GateRecord {
        var record = GateRecord()
        record.pendingVersion = pending
        record.firstSeen = Date(timeIntervalSince1970: 1_800_000_000)
        record.promptsShown = 5
        return record
    }

    @Test func anUpdatedAppResetsThePendingVersion() {
        var updated = record(pending: "1.5.0")
        policy.reconcile(&updated, at: Date())
        #expect(updated.pendingVersion == nil && updated.promptsShown == 0 && !updated.isRecovering)
    }

    /// An older store answer keeps the pending version, and a recovering record still fails
    /// closed on it (the answer's other consequences run as for any answer).
    @Test func anOlderAnswerKeepsThePendingVersionAndARecoveringRecordFailsClosed() throws {
        let older = GatePolicy(installed: try AppVersion("1.4.0"))
        var recovering = record(pending: "1.6.0")
        recovering.promptsShown = 0
        recovering.isRecovering = true
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        try older.record(StoreRelease(version: "1.5.0"), at: now, into: &recovering)
        #expect(recovering.pendingVersion == "1.6.0")
        #expect(!recovering.isRecovering)
        #expect(recovering.promptsShown == older.maxPrompts, "a recovering record past its grace has no uses left")
    }

    /// An update to the version whose sighting started the count, while a newer one is pending
    /// (the store's cache a release behind offered it): the newer one's own grace starts, from its
    /// release date, with no use counted (found by an attack: the user who updated stayed at the
    /// old count, with no grace for a version out six days). Through the real gate and its store.
    @Test func anUpdateToTheCountedVersionStartsTheNewerOnesGrace() throws {
        let day: TimeInterval = 86_400
        let harness = try GateHarness()
        try harness.serve("1.5.0", released: harness.start.addingTimeInterval(-40 * day))
        #expect(try harness.use() == .prompt(5))
        #expect(try harness.use() == .prompt(4))
        harness.time.advance(days: 2)
        try harness.serve("1.5.1", released: harness.start.addingTimeInterval(-4 * day))
        // Still on 1.4.0: 1.5.0 has been out 42 days; the count goes on.
        _ = try harness.makeGate().refreshIfDue()
        #expect(try harness.use() == .prompt(3))
        // Updated to 1.5.0: 1.5.1 is six days old, in its grace.
        let updated = try harness.makeGate(installed: "1.5.0").authorizeUse().decision
        guard case .notice = updated else { Issue.record("expected the grace of 1.5.1, got \(updated)"); return }
        // Its grace over, its own five uses.
        harness.time.advance(days: 25)
        #expect(try harness.makeGate(installed: "1.5.0").authorizeUse().decision == .prompt(usesLeft: 5))
        // Back on 1.4.0 (a copy left on another disk) nothing is given again: 1.5.1's count goes on.
        #expect(try harness.makeGate(installed: "1.4.0").authorizeUse().decision == .prompt(usesLeft: 4))
    }

    @Test func aNewerPendingVersionStays() {
        var pending = record(pending: "1.6.0")
        policy.reconcile(&pending, at: Date())
        #expect(pending == record(pending: "1.6.0"))
    }

    @Test(arguments: ["", "not a version", "1..2", "v"])
    func anUnreadablePendingVersionFailsClosed(_ text: String) {
        var unreadable = record(pending: text)
        policy.reconcile(&unreadable, at: Date())
        #expect(unreadable.pendingVersion == text, "kept, not reset")
        #expect(unreadable.promptsShown == 5)
        #expect(unreadable.isRecovering, "the next use needs a good lookup")
        #expect(policy.phase(of: unreadable, at: Date(timeIntervalSince1970: 1_900_000_000)) == .closed)
    }
}
