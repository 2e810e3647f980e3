import Foundation
import MapGate
import Testing

/// ``GatePolicy/reconcile(_:)``: the app updated opens the gate at once; a pending version that
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
        policy.reconcile(&updated)
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

    @Test func aNewerPendingVersionStays() {
        var pending = record(pending: "1.6.0")
        policy.reconcile(&pending)
        #expect(pending == record(pending: "1.6.0"))
    }

    @Test(arguments: ["", "not a version", "1..2", "v"])
    func anUnreadablePendingVersionFailsClosed(_ text: String) {
        var unreadable = record(pending: text)
        policy.reconcile(&unreadable)
        #expect(unreadable.pendingVersion == text, "kept, not reset")
        #expect(unreadable.promptsShown == 5)
        #expect(unreadable.isRecovering, "the next use needs a good lookup")
        #expect(policy.phase(of: unreadable, at: Date(timeIntervalSince1970: 1_900_000_000)) == .closed)
    }
}
