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
        // The same answer outside, given again a day later, resets it: the store's word.
        #expect(try harness.makeGate().check().record.pendingVersion == "1.5.0")
        harness.time.advance(days: 1)
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

    /// Issue 35, part 2, item 4: a clock held still inside `unshare -r --time` with faketime. A
    /// trusted time from inside that is *later* moves the clock forward (it only tightens), so a
    /// successful lookup ends the grace all the same.
    @Test func aLaterTrustedTimeFromInsideMovesTheClockForward() throws {
        let policy = GatePolicy(installed: try AppVersion("1.4.0"))
        var record = GateRecord()
        let held = Date(timeIntervalSince1970: 1_800_000_000)
        try policy.record(StoreRelease(version: "1.5.0"), at: held, into: &record, tightenOnly: true)
        #expect(policy.phase(of: record, at: held) == .grace(until: held.addingTimeInterval(30 * 86_400)))
        let trusted = held.addingTimeInterval(31 * 86_400)
        let now = try policy.record(StoreRelease(version: "1.5.0"), trustedTime: trusted, at: held, into: &record, tightenOnly: true)
        #expect(now == trusted)
        #expect(record.latestClock == trusted)
        #expect(policy.phase(of: record, at: now) == .prompting(usesLeft: 5))
        // "Up to date" from inside, with a trusted time: the clock moves, the pending version stays.
        try policy.record(StoreRelease(version: "1.4.0"), trustedTime: trusted.addingTimeInterval(60), at: held, into: &record, tightenOnly: true)
        #expect(record.pendingVersion == "1.5.0")
        #expect(record.latestClock == trusted.addingTimeInterval(60))
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

/// The boot clock (issue 25, part 2, item 4): within one boot the gate's time moves at least as
/// fast as the kernel's boot clock, whatever the wall clock does.
@Suite struct GateBootClockTests {
    init() throws {
        policy = GatePolicy(installed: try AppVersion("1.4.0"))
    }

    let policy: GatePolicy
    let start = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func aFrozenWallClockStillMovesOnTheSameBoot() {
        var record = GateRecord()
        #expect(policy.advanceClock(&record, reading: start, boot: BootReading(id: "a", seconds: 100)) == start)
        let later = policy.advanceClock(&record, reading: start, boot: BootReading(id: "a", seconds: 100 + 86_400))
        #expect(later == start.addingTimeInterval(86_400))
        // A clock set back a year gains nothing either.
        let back = policy.advanceClock(&record, reading: start.addingTimeInterval(-365 * 86_400), boot: BootReading(id: "a", seconds: 100 + 86_401))
        #expect(back == start.addingTimeInterval(86_401))
    }

    @Test func anotherBootStartsFromTheHighWaterMark() {
        var record = GateRecord()
        _ = policy.advanceClock(&record, reading: start, boot: BootReading(id: "a", seconds: 500_000))
        let rebooted = policy.advanceClock(&record, reading: start, boot: BootReading(id: "b", seconds: 30))
        #expect(rebooted == start)
        #expect(record.bootID == "b" && record.bootSeconds == 30)
    }

    @Test func theGraceEndsOnTheBootClockWithAFrozenWallClockOffline() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        let boot = Locked(BootReading(id: "boot", seconds: 10))
        let frozen = harness.time.now
        let clock = Clock({ frozen }, boot: { boot.withLock { $0 } })
        func gate() throws -> Gate {
            Gate(store: try harness.makeStore(), settings: harness.settings, clock: clock, installed: try AppVersion("1.4.0"), isConfined: false)
        }
        #expect(try gate().authorizeUse().decision != .refused)
        try harness.serve(nil)  // offline from now on
        boot.withLock { $0.seconds += 31 * 86_400 }
        let use = try gate().authorizeUse()
        #expect(use.decision == .prompt(usesLeft: 5), "\(use.decision)")
    }
}
