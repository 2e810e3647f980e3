import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// In a user namespace of the user's own (``UserNamespace``) the store's answer may be the
/// user's: it may only make the gate stricter (issue 25, part 2, item 1).
@Suite struct GateConfinementTests {
    let harness: GateHarness

    init() throws {
        harness = try GateHarness()
    }

    func confinedGate() throws -> Gate {
        Gate(store: try harness.makeStore(), settings: harness.settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"), isConfined: true)
    }

    @Test func aNewerVersionIsStillTakenIn() throws {
        try harness.serve("1.5.0")
        let report = try confinedGate().check()
        #expect(report.record.pendingVersion == "1.5.0")
    }

    @Test func upToDateDoesNotResetAPendingVersion() throws {
        try harness.serve("1.5.0")
        _ = try harness.use()
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        try harness.serve("1.4.0")
        let confined = try confinedGate().check()
        #expect(confined.record.pendingVersion == "1.5.0")
        #expect(confined.record.promptsShown == 1)
        // The same answer outside resets it: the store's word.
        #expect(try harness.makeGate().check().record.pendingVersion == nil)
    }

    @Test func trustedTimeFromInsideIsNotTaken() throws {
        try harness.serve("1.5.0")
        _ = try harness.use()
        let before = try harness.makeGate().status().record.latestClock
        // An answer can only carry trusted time over HTTPS; the policy decides, not the namespace.
        // Here: a confined record() with a trusted time far in the past must not pull the clock back.
        let policy = GatePolicy(installed: try AppVersion("1.4.0"))
        var record = try harness.makeGate().status().record
        try policy.record(StoreRelease(version: "1.5.0"), trustedTime: Date(timeIntervalSince1970: 0), at: harness.time.now, into: &record, tightenOnly: true)
        #expect(record.latestClock == before)
    }

    @Test func aLookupInsideCannotEndARecovery() throws {
        try harness.serve("1.4.0")
        var record = GateRecord()
        record.isRecovering = true
        let policy = GatePolicy(installed: try AppVersion("1.4.0"))
        try policy.record(StoreRelease(version: "1.4.0"), at: harness.time.now, into: &record, tightenOnly: true)
        #expect(record.isRecovering)
        #expect(record.lastLookupError?.contains("inside a user namespace") == true)
    }
}
