import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// A catalog key that only an unsigned managed policy trusts signs map data, but its catalogs'
/// `gate` rules may only make the gate stricter (issue 25: an unsigned policy never loosens).
@Suite struct GateRuleKeysTests {
    let harness: GateHarness
    let added = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"

    init() throws {
        harness = try GateHarness()
    }

    func catalog(gate: String) throws -> Catalog {
        let json = #"{"formatVersion": 1, "publisher": "P", "generated": "2026-11-01T00:00:00Z", "expires": "2100-01-01T00:00:00Z", "serial": 1, "regions": [], "gate": \#(gate)}"#
        return try Catalog.parse(Data(json.utf8), sourceURL: "https://maps.example/catalog.json")
    }

    func accept(gateRuleKeys: [String]?) throws -> PublisherGate? {
        var settings = harness.settings
        settings.trustedKeys = [added]
        settings.gateRuleKeys = gateRuleKeys
        let gate = Gate(store: try harness.makeStore(), settings: settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        let keyID = try MinisignPublicKey(text: added).keyID.hex
        try gate.accept(try catalog(gate: #"{"graceDays": 365, "maxPrompts": 50, "minimumAppVersion": "1.2"}"#), sha256: "a", signedBy: keyID)
        return try gate.status().record.publisherGate
    }

    @Test func itsLooserRulesAreClampedToThePolicys() throws {
        let saved = try accept(gateRuleKeys: [])
        #expect(saved == PublisherGate(minimumAppVersion: "1.2", graceDays: 30, maxPrompts: 5))
    }

    @Test func aKeyTheProfileOrASignedPolicyTrustsSetsThemAsTheyAre() throws {
        let saved = try accept(gateRuleKeys: nil)
        #expect(saved == PublisherGate(minimumAppVersion: "1.2", graceDays: 365, maxPrompts: 50))
    }

    /// Issue 35, part 2, item 6: rules taken in a namespace whose unsigned policy trusted the
    /// user's own key were clamped to *that* policy; outside, the administrator's stricter policy
    /// (maxPrompts 2) is in force, and the saved rules, whose signer it does not trust to set
    /// rules, may not loosen it: 2 uses, not the namespace's 5.
    @Test func savedRulesNeverLoosenAStricterPolicyThatDoesNotTrustTheirSigner() throws {
        _ = try accept(gateRuleKeys: [])
        var administrator = harness.settings
        administrator.maxPrompts = 2
        administrator.graceDays = 7
        let outside = Gate(store: try harness.makeStore(), settings: administrator, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        let report = try outside.status()
        #expect(report.usesLeft == 2, "the saved rules loosened the administrator's policy: \(report.usesLeft) uses")
        #expect(report.maxPrompts == 2)
    }

    /// The rules of a key the policy in force trusts to set them still apply as they are.
    @Test func savedRulesOfATrustedSignerStillApply() throws {
        _ = try accept(gateRuleKeys: nil)
        var same = harness.settings
        same.trustedKeys = [added]
        let again = Gate(store: try harness.makeStore(), settings: same, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        #expect(try again.status().maxPrompts == 50)
    }

    func gate(_ settings: GateSettings) throws -> Gate {
        Gate(store: try harness.makeStore(), settings: settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
    }

    /// Issue 35, part 2, item 6, second half: the administrator's unsigned tightening (maxPrompts
    /// 2, closeAfterDays 1) is kept in the sealed record, so a run that cannot see the policy (a
    /// mount namespace hiding `/etc/mapgate/policy.json`: here, the profile's settings alone)
    /// still has 2 prompts and the closing day; an unsigned policy cannot relax it either.
    @Test func anUnsignedTighteningOutlivesThePolicyThatMadeIt() throws {
        var administrator = harness.settings
        administrator.maxPrompts = 2
        administrator.closeAfterDays = 1
        #expect(try gate(administrator).status().maxPrompts == 2)
        let hidden = try gate(harness.settings).status()
        #expect(hidden.maxPrompts == 2, "a run that does not see the policy got \(hidden.maxPrompts) prompts")
        #expect(hidden.record.strictestRules == PublisherGate(maxPrompts: 2, closeAfterDays: 1))
        var looser = harness.settings
        looser.maxPrompts = 4
        #expect(try gate(looser).status().maxPrompts == 2, "an unsigned policy relaxed it")
        // Stricter still is taken in, key by key.
        var stricter = harness.settings
        stricter.graceDays = 10
        #expect(try gate(stricter).status().record.strictestRules == PublisherGate(graceDays: 10, maxPrompts: 2, closeAfterDays: 1))
    }

    /// A signed policy sets the rules anew: the kept tightening goes, and its own rules apply.
    @Test func aSignedPolicyRelaxesTheKeptTightening() throws {
        var administrator = harness.settings
        administrator.maxPrompts = 2
        _ = try gate(administrator).status()
        var signed = harness.settings
        signed.managedPolicySigned = true
        let report = try gate(signed).status()
        #expect(report.maxPrompts == 5)
        #expect(report.record.strictestRules == nil)
        #expect(try gate(harness.settings).status().maxPrompts == 5, "after a signed policy, nothing stricter is kept")
    }

    /// The demo's and the tests' policy keys, as a publisher rotating from one to the other.
    static let rotating = ["RWR3FrpUU/yaSpsVqdL/nIPgTaAyEjBZc0vtcivX4Y+pDFGQgMG3PX1y", "RWQ2lPOEDhpOnXl+nwg6Nbrac1DQHZ9NC1i+0JYJNixIcn27fTIB88OA"]

    func catalog(serial: Int64, gate: String?, generated: String = "2026-11-01T00:00:00Z") throws -> Catalog {
        let rules = gate.map { #", "gate": \#($0)"# } ?? ""
        let json = #"{"formatVersion": 1, "publisher": "P", "generated": "\#(generated)", "expires": "2100-01-01T00:00:00Z", "serial": \#(serial), "regions": []\#(rules)}"#
        return try Catalog.parse(Data(json.utf8), sourceURL: "https://maps.example/catalog.json")
    }

    /// Found by an attack: while a publisher rotates keys (both trusted), an older catalog signed
    /// by the other key (kept, or on a stick) was accepted after a newer one (serials are per key:
    /// two publishers' sequences are not one), and its rules replaced the newer's: a gate closed by
    /// `minimumAppVersion` reopened. The rules in force are replaced only by a catalog of their
    /// signer, or of a serial not lower than theirs; an older one's rules only add to them.
    @Test func anOlderCatalogOfThePublishersOtherKeyDoesNotPutItsRulesBack() throws {
        var settings = harness.settings
        settings.trustedKeys = Self.rotating
        let (old, new) = (try MinisignPublicKey(text: Self.rotating[0]).keyID.hex, try MinisignPublicKey(text: Self.rotating[1]).keyID.hex)
        try gate(settings).accept(try catalog(serial: 7, gate: #"{"maxPrompts": 9}"#), sha256: "a7", signedBy: old)
        try gate(settings).accept(try catalog(serial: 10, gate: #"{"minimumAppVersion": "1.5", "maxPrompts": 12}"#), sha256: "b10", signedBy: new)
        #expect(try gate(settings).status().phase.isClosed)
        try gate(settings).accept(try catalog(serial: 7, gate: #"{"maxPrompts": 9}"#), sha256: "a7", signedBy: old)
        let replayed = try gate(settings).status()
        #expect(replayed.phase.isClosed, "the replayed catalog reopened the gate: \(String(describing: replayed.record.publisherGate))")
        #expect(replayed.record.publisherGate == PublisherGate(minimumAppVersion: "1.5", maxPrompts: 9))
        // The publisher relaxes the rules with a newer catalog, of either key.
        try gate(settings).accept(try catalog(serial: 11, gate: nil), sha256: "a11", signedBy: old)
        #expect(try !gate(settings).status().phase.isClosed)
    }

    /// Found by an attack: an older catalog of the publisher's other key (published before the
    /// one in force; on a stick) was taken in for its data, "changing nothing installed", but its
    /// stricter rules were added to those in force (`maxPrompts` 1, no grace) and closed the
    /// gate, again at every replay. A catalog known to be older than one already accepted changes
    /// no rules; the newer one's stay.
    @Test func aCatalogPublishedBeforeOneAcceptedChangesNoRules() throws {
        var settings = harness.settings
        settings.trustedKeys = Self.rotating
        let (old, new) = (try MinisignPublicKey(text: Self.rotating[0]).keyID.hex, try MinisignPublicKey(text: Self.rotating[1]).keyID.hex)
        let rules = PublisherGate(graceDays: 30, maxPrompts: 5)
        try gate(settings).accept(try catalog(serial: 4, gate: #"{"graceDays": 30, "maxPrompts": 5}"#, generated: "2026-11-01T00:00:00Z"), sha256: "n4", signedBy: new)
        #expect(try gate(settings).status().record.publisherGate == rules)
        let newer = try gate(settings).accept(
            try catalog(serial: 9, gate: #"{"graceDays": 0, "maxPrompts": 1, "closeAfterDays": 1}"#, generated: "2026-06-01T00:00:00Z"), sha256: "o9", signedBy: old)
        #expect(newer?.keyID == new, "the run is told the catalog is older")
        let after = try gate(settings).status()
        #expect(after.record.publisherGate == rules, "the older catalog changed the rules: \(String(describing: after.record.publisherGate))")
        #expect(after.maxPrompts == 5)
        // The other key's catalog published later sets the rules as before.
        try gate(settings).accept(try catalog(serial: 10, gate: #"{"maxPrompts": 3}"#, generated: "2026-12-01T00:00:00Z"), sha256: "o10", signedBy: old)
        #expect(try gate(settings).status().maxPrompts == 3)
    }

    /// Found by the same attack: a catalog signed by a key only an unsigned policy trusts (the
    /// user's own, in a namespace of their own) put its rules in place of the publisher's: none
    /// (no `gate`) erased them, and a lower `minimumAppVersion` lowered it. Its rules are only
    /// added now, each the stricter.
    @Test(arguments: [nil, #"{"minimumAppVersion": "1.0", "maxPrompts": 3}"#])
    func aKeyThatMayOnlyTightenNeverErasesThePublishersRules(_ userRules: String?) throws {
        var publisher = harness.settings
        publisher.trustedKeys = [Self.rotating[0]]
        try gate(publisher).accept(try catalog(serial: 10, gate: #"{"minimumAppVersion": "1.5"}"#), sha256: "p", signedBy: try MinisignPublicKey(text: Self.rotating[0]).keyID.hex)
        #expect(try gate(publisher).status().phase.isClosed)
        var namespace = harness.settings
        namespace.trustedKeys = [added]
        namespace.gateRuleKeys = []
        try gate(namespace).accept(try catalog(serial: 1, gate: userRules), sha256: "u", signedBy: try MinisignPublicKey(text: added).keyID.hex)
        let saved = try gate(publisher).status()
        #expect(saved.phase.isClosed, "the user's own key reopened the gate: \(String(describing: saved.record.publisherGate))")
        #expect(saved.record.publisherGate?.minimumAppVersion == "1.5")
        if userRules != nil { #expect(saved.record.publisherGate?.maxPrompts == 3) }
    }

    /// Found by the same attack: serials summed to compare two copies of the record overflowed
    /// (one key's at Int64's largest, another's 1), and every later command crashed.
    @Test func serialsAsLargeAsInt64HoldsDoNotOverflow() throws {
        var settings = harness.settings
        settings.trustedKeys = Self.rotating
        settings.gateRuleKeys = []
        try gate(settings).accept(try catalog(serial: .max, gate: nil), sha256: "a", signedBy: try MinisignPublicKey(text: Self.rotating[0]).keyID.hex)
        try gate(settings).accept(try catalog(serial: 1, gate: nil), sha256: "b", signedBy: try MinisignPublicKey(text: Self.rotating[1]).keyID.hex)
        #expect(try gate(settings).status().record.catalogSerials.count == 2)
    }

    /// The profile's own rules are not stored: a later app whose profile allows more is not held
    /// to this one's.
    @Test func theProfilesRulesAreNotKept() throws {
        #expect(try gate(harness.settings).status().record.strictestRules == nil)
    }
}
