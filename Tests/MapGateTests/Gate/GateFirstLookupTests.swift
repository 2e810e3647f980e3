import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Issue 35, item 8: a record made afresh where the store cannot be reached (both state copies
/// deleted, the regions installed again from a mirror inside `unshare -n`) would be open for
/// ever. With map data installed, a record that has never had a successful lookup needs one
/// once `firstLookupDays` (90 by default) have passed since its first use, as a recovering record
/// does; a record that reached the store once is never held to it.
@Suite struct GateFirstLookupTests {
    let harness: GateHarness

    init() throws {
        harness = try GateHarness()
    }

    func use(opening: [String] = ["r"], installing: [String] = []) throws -> UseDecision {
        try harness.makeGate().authorizeUse(opening: opening, installing: installing).decision
    }

    @Test func aRecordThatNeverReachedTheStoreNeedsOneAfterItsDays() throws {
        try harness.serve(nil)
        #expect(try use(opening: [], installing: ["r"]) == .allowed)
        harness.time.advance(days: 89.9)
        #expect(try use() == .allowed)
        harness.time.advance(days: 0.2)
        do {
            _ = try use()
            Issue.record("a record that never reached the store was open after 90 days")
        } catch let error as GateRecoveryError {
            #expect(error.reason == .neverReached(days: 90))
            #expect(error.localizedDescription.contains("has not reached the App Store once in the 90 days"), "\(error.localizedDescription)")
        }
        #expect(try harness.makeGate().status().record.promptsShown == 0, "the refusal counted a use")
        // Once the store answers, the maps open again.
        try harness.serve("1.4.0")
        #expect(try use() == .allowed)
        try harness.serve(nil)
        harness.time.advance(days: 400)
        #expect(try use() == .allowed, "a record that reached the store once is not held to it")
    }

    @Test func aRecordThatReachedTheStoreOnceIsNeverHeldToIt() throws {
        try harness.serve("1.4.0")
        #expect(try use(opening: [], installing: ["r"]) == .allowed)
        try harness.serve(nil)
        harness.time.advance(days: 200)
        #expect(try use() == .allowed)
    }

    @Test func withoutMapDataNothingIsAsked() throws {
        try harness.serve(nil)
        #expect(try use(opening: []) == .allowed)
        harness.time.advance(days: 200)
        #expect(try use(opening: []) == .allowed)
    }

    @Test func thePublisherSetsTheDaysAndAnUnsignedPolicyMayOnlyShortenThem() throws {
        harness.settings.firstLookupDays = 7
        try harness.serve(nil)
        #expect(try use(opening: [], installing: ["r"]) == .allowed)
        harness.time.advance(days: 7)
        #expect(throws: GateRecoveryError.self) { _ = try use() }
        var longer = ProductProfile.settings
        longer.firstLookupDays = 365
        #expect(longer.loosenedKeys(comparedTo: ProductProfile.settings) == ["firstLookupDays"])
        longer.firstLookupDays = nil
        #expect(longer.loosenedKeys(comparedTo: ProductProfile.settings) == ["firstLookupDays"])
        longer.firstLookupDays = 30
        #expect(longer.loosenedKeys(comparedTo: ProductProfile.settings).isEmpty)
    }
}
