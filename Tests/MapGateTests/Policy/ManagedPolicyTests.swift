import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The managed policy: honoured only when root's alone, strict about its keys, and loosening the
/// profile only with the publisher's signature (issue 25: root ownership can be had in a user
/// namespace).
@Suite struct ManagedPolicyTests {
    let work: TemporaryDirectory
    let nobody: uid_t = 65534

    init() throws {
        work = try TemporaryDirectory()
    }

    func policy(_ json: String, name: String = "policy.json") throws -> String {
        try work.write(name, json)
    }

    @Test func everyKeyReplacesTheProfile() throws {
        let path = try policy(
            """
            {"appID": 7, "bundleID": "com.example.maps", "country": "KR", "lookupURL": "http://127.0.0.1:9/l",
             "allowInsecureLookup": true, "lookupUsesProxy": true,
             "lookupCAFile": "/etc/ca.pem", "graceDays": 10, "maxPrompts": 3, "checkIntervalHours": 1.5,
             "closeAfterDays": 60, "catalogURL": "file:///srv/c.json",
             "trustedKeys": ["RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"], "requireSignedCatalog": false}
            """)
        try PublisherKey.testPolicy.sign(path)
        let settings = try ManagedPolicy.apply(path: path, mustExist: true)
        #expect(settings.appID == 7)
        #expect(settings.bundleID == "com.example.maps")
        #expect(settings.country == "kr")
        #expect(settings.lookupURL == "http://127.0.0.1:9/l")
        #expect(settings.lookupCAFile == "/etc/ca.pem")
        #expect(settings.graceDays == 10)
        #expect(settings.maxPrompts == 3)
        #expect(settings.checkIntervalHours == 1.5)
        #expect(settings.closeAfterDays == 60)
        #expect(settings.catalogURL == "file:///srv/c.json")
        #expect(settings.trustedKeys.count == 1)
        #expect(settings.requireSignedCatalog == false)
        #expect(settings.allowInsecureLookup)
        #expect(settings.lookupUsesProxy)
    }

    /// Round two: a plain-HTTP lookup only where the policy says so; proxies off by default.
    @Test func aPlainHTTPLookupNeedsAllowInsecureLookup() throws {
        let path = try policy(#"{"lookupURL": "http://store.example/lookup"}"#)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.localizedDescription.contains("allowInsecureLookup") == true, "\(String(describing: error))")
        #expect(ProductProfile.settings.lookupUsesProxy == false)
        #expect(ProductProfile.settings.allowInsecureLookup == false)
    }

    /// Round two: any root-owned file named by `MAPGATE_POLICY` (a `{}` in some checkout) gave
    /// the profile's uses back once `/etc/mapgate/policy.json` had closed the gate.
    @Test func theSystemPolicyWinsOverTheEnvironment() throws {
        let system = try policy(#"{"maxPrompts": 0}"#, name: "system.json")
        let other = try policy("{}", name: "other.json")
        let chosen = Locations.policyFile(environment: ["MAPGATE_POLICY": other], systemPath: system)
        #expect(chosen.path == system)
        let absent = work.file("absent.json")
        #expect(Locations.policyFile(environment: ["MAPGATE_POLICY": other], systemPath: absent).path == other)
        #expect(Locations.policyFile(environment: [:], systemPath: absent) == (absent, false))
    }

    /// Round two: the check and the read were two opens of the path; a link flipped between
    /// them loaded the user's own rules. Now the file read is the one checked.
    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func aLinkFlippedBetweenCheckAndReadIsNotFollowed() throws {
        let good = try policy(#"{"maxPrompts": 1}"#, name: "good.json")
        let evil = try policy(#"{"maxPrompts": 100}"#, name: "evil.json")
        #expect(chown(evil, nobody, nobody) == 0)
        let link = work.file("policy-link.json")
        #expect(symlink(good, link) == 0)
        var settings: GateSettings?
        var refusal: (any Error)?
        do {
            settings = try ManagedPolicy.apply(path: link, mustExist: true) {
                // The swap an attacker's loop wins once in a while: the link now leads to their file.
                unlink(link)
                symlink(evil, link)
            }
        } catch {
            refusal = error
        }
        // Either the file that was checked is what was read, or the run is refused; never the user's rules.
        #expect(settings?.maxPrompts != 100, "the user's own policy was loaded")
        #expect(settings?.maxPrompts == 1 || refusal != nil)
    }

    @Test func noFileMeansTheProfileUnlessNamed() throws {
        #expect(try ManagedPolicy.apply(path: work.file("none.json"), mustExist: false) == ProductProfile.settings)
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: work.file("none.json"), mustExist: true) }
    }

    @Test(arguments: [
        (#"{"checkIntervalHours": 8760}"#, "checkIntervalHours", "out of range"),
        (#"{"maxPrompts": 1000}"#, "maxPrompts", "out of range"),
        (#"{"graceDays": 3650}"#, "graceDays", "out of range"),
        (#"{"graceDays": true}"#, "graceDays", "must be an integer"),
        (#"{"requireSignedCatalog": "no"}"#, "requireSignedCatalog", "must be true or false"),
        (#"{"trustedKeys": ["nope"]}"#, "trustedKeys", "invalid value"),
        (#"{"lookupURL": "file:///etc/lookup.json"}"#, "lookupURL", "not an absolute"),
        (#"{"maxPrompt": 3}"#, "maxPrompt", "unknown key"),
    ])
    func badValueNamesTheKey(json: String, key: String, reason: String) throws {
        let path = try policy(json)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.key == key)
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
        #expect(error?.localizedDescription.hasPrefix("managed policy \(path):") == true)
    }

    // MARK: Stricter as it is, looser only when signed

    @Test(arguments: [
        (#"{"graceDays": 365}"#, "graceDays"), (#"{"maxPrompts": 6}"#, "maxPrompts"),
        (#"{"lookupURL": "https://store.example/lookup"}"#, "lookupURL"), (#"{"appID": 7}"#, "appID"),
        (#"{"bundleID": "com.example.other"}"#, "bundleID"), (#"{"country": "kr"}"#, "country"),
        (#"{"lookupCAFile": "/home/user/ca.pem"}"#, "lookupCAFile"), (#"{"lookupUsesProxy": true}"#, "lookupUsesProxy"),
        (#"{"lookupURL": "http://127.0.0.1:9/l", "allowInsecureLookup": true}"#, "lookupURL"),
    ])
    func anUnsignedPolicyThatLoosensTheProfileIsRefused(json: String, key: String) throws {
        let path = try policy(json)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.key == key)
        #expect(error?.reason.contains("loosens the publisher's rules, which an unsigned policy may not do") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("policy.json.minisig") == true)
    }

    @Test func anUnsignedPolicyMayMakeTheRulesStricter() throws {
        let path = try policy(
            #"{"graceDays": 7, "maxPrompts": 2, "closeAfterDays": 60, "checkIntervalHours": 6, "requireSignedCatalog": true, "catalogURL": "https://mirror.example/c.json"}"#)
        let settings = try ManagedPolicy.apply(path: path, mustExist: true)
        #expect(settings.graceDays == 7 && settings.maxPrompts == 2 && settings.closeAfterDays == 60 && settings.checkIntervalHours == 6)
        // Stricter than a stricter profile is judged against that profile.
        var strict = ProductProfile.settings
        strict.closeAfterDays = 30
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true, to: strict) }
    }

    /// A publisher hosting its own catalog names its key and URL in an unsigned policy (the README's
    /// tour): allowed, but that key's catalogs may only tighten the gate.
    @Test func anUnsignedPolicyMayNameCatalogKeysWhoseGateRulesOnlyTighten() throws {
        let key = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"
        let path = try policy(#"{"trustedKeys": ["\#(key)"], "requireSignedCatalog": false, "catalogURL": "http://127.0.0.1:8000/catalog.json"}"#)
        let settings = try ManagedPolicy.apply(path: path, mustExist: true)
        #expect(settings.trustedKeys == [key])
        #expect(settings.gateRuleKeys == ProductProfile.settings.trustedKeys)
        let policy = GatePolicy(installed: try AppVersion("1.4.0"), settings: settings)
        let tight = policy.tightening(PublisherGate(minimumAppVersion: "1.3", graceDays: 365, maxPrompts: 1, closeAfterDays: 10))
        #expect(tight == PublisherGate(minimumAppVersion: "1.3", graceDays: 30, maxPrompts: 1, closeAfterDays: 10))
        // Signed, the same policy's keys may set looser rules.
        try PublisherKey.testPolicy.sign(path)
        #expect(try ManagedPolicy.apply(path: path, mustExist: true).gateRuleKeys == nil)
    }

    @Test func aSignatureByThePolicyKeyLetsItLoosen() throws {
        let path = try policy(#"{"graceDays": 365, "lookupURL": "https://store.example/lookup"}"#)
        try PublisherKey.testPolicy.sign(path)
        #expect(try ManagedPolicy.apply(path: path, mustExist: true).graceDays == 365)
        // A build that trusts no policy key (a release build of this source) refuses it.
        let none = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true, signers: []) }
        #expect(none?.reason.contains("trusts no key to sign policies") == true, "\(none?.reason ?? "")")
    }

    /// `/etc/mapgate/policy.json` linked to a vendor's folder holding the policy and its
    /// signature: the signature beside the file the link leads to is the policy's. One beside the
    /// link is read first, and a bad one there is not passed over.
    @Test func aLinkedPolicyIsSignedBesideWhatItLeadsTo() throws {
        let vendor = try policy(#"{"graceDays": 365}"#, name: "vendor/policy.json")
        try PublisherKey.testPolicy.sign(vendor)
        let link = work.path + "/policy.json"
        #expect(symlink(vendor, link) == 0)
        #expect(try ManagedPolicy.apply(path: link, mustExist: true).graceDays == 365)
        let other = try PublisherKey(in: work.path, name: "other")
        _ = try policy(#"{"graceDays": 365}"#, name: "copy.json")
        try other.sign(work.path + "/copy.json")
        #expect(rename(work.path + "/copy.json.minisig", link + ".minisig") == 0)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: link, mustExist: true) }
        #expect(error?.reason.contains("is not a valid signature") == true, "\(error?.reason ?? "")")
    }

    @Test func aBadSignatureIsNeverIgnored() throws {
        let path = try policy(#"{"graceDays": 365}"#)
        let other = try PublisherKey(in: work.path, name: "other")
        try other.sign(path)
        let wrongKey = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(wrongKey?.reason.contains("is not a valid signature by the publisher's policy key") == true, "\(wrongKey?.reason ?? "")")
        // Signed, then edited: refused, even though the edit tightens.
        try PublisherKey.testPolicy.sign(path)
        _ = try policy(#"{"graceDays": 364}"#)
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func aSignatureFileSomebodyElseOwnsIsRefused() throws {
        let path = try policy(#"{"graceDays": 365}"#)
        try PublisherKey.testPolicy.sign(path)
        #expect(chown(path + ".minisig", nobody, gid_t(nobody)) == 0)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.reason.contains("is not trusted") == true, "\(error?.reason ?? "")")
    }

    @Test func gateSettingsNeverLookUpLessThanDaily() {
        #expect(GateSettings(checkIntervalHours: 10_000).checkIntervalHours == 24)
    }

    // MARK: Ownership (the temporary folder is root's: the tests run as root)

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func rootOwnedFileInRootOwnedFoldersIsHonoured() throws {
        let path = try policy(#"{"maxPrompts": 2}"#)
        #expect(try ManagedPolicy.apply(path: path, mustExist: true).maxPrompts == 2)
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func fileOwnedBySomebodyElseIsRefused() throws {
        let path = try policy(#"{"maxPrompts": 100}"#)
        #expect(chown(path, nobody, gid_t(nobody)) == 0)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.reason.contains("\(path) is owned by uid 65534, not root") == true, "\(error?.reason ?? "")")
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chmod of root's files needs root"), arguments: [0o664, 0o646])
    func fileWritableByOthersIsRefused(mode: Int) throws {
        let path = try policy("{}")
        #expect(chmod(path, mode_t(mode)) == 0)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(error?.reason.contains("writable by") == true, "\(error?.reason ?? "")")
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func folderOwnedOrWritableBySomebodyElseIsRefused() throws {
        let folder = work.file("etc")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = try policy("{}", name: "etc/policy.json")
        #expect(chmod(folder, 0o775) == 0)
        let group = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(group?.reason.contains("\(folder) is writable by group") == true, "\(group?.reason ?? "")")
        #expect(chmod(folder, 0o755) == 0)
        #expect(chown(folder, nobody, gid_t(nobody)) == 0)
        let owner = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
        #expect(owner?.reason.contains("\(folder) is owned by uid 65534") == true)
        // A sticky folder writable by all (like /tmp) is fine: nobody can replace root's file in it.
        #expect(chown(folder, 0, 0) == 0)
        #expect(chmod(folder, 0o1777) == 0)
        #expect(try ManagedPolicy.apply(path: path, mustExist: true) == ProductProfile.settings)
        #expect(chmod(folder, 0o777) == 0)
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: path, mustExist: true) }
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "chown needs root (CI runs as root)"))
    func symlinkIsJudgedByWhatItLeadsTo() throws {
        let theirs = try policy(#"{"maxPrompts": 100}"#, name: "theirs.json")
        #expect(chown(theirs, nobody, gid_t(nobody)) == 0)
        let link = work.file("link.json")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: theirs)
        let error = #expect(throws: ConfigurationError.self) { try ManagedPolicy.apply(path: link, mustExist: true) }
        #expect(error?.reason.contains("owned by uid 65534") == true)
        let roots = try policy(#"{"maxPrompts": 2}"#, name: "roots.json")
        let good = work.file("good.json")
        try FileManager.default.createSymbolicLink(atPath: good, withDestinationPath: roots)
        #expect(try ManagedPolicy.apply(path: good, mustExist: true).maxPrompts == 2)
    }

    /// Issue 35, part 2, item 7: a signed policy may say which machines it is for and until
    /// when; copied to another machine, or kept past its time, it is refused (exit 64), naming why.
    @Test func aPolicyForOtherMachinesOrPastItsTimeIsRefused() throws {
        let this = try #require(ManagedPolicy.machineID(), "/etc/machine-id")
        let other = String(repeating: "0", count: 32)
        let mine = try policy(#"{"graceDays": 60, "machines": ["\#(this.uppercased())"], "expires": "2099-01-01T00:00:00Z"}"#)
        try PublisherKey.testPolicy.sign(mine)
        #expect(try ManagedPolicy.apply(path: mine, mustExist: true).graceDays == 60)

        let copied = try policy(#"{"graceDays": 60, "machines": ["\#(other)"]}"#, name: "copied.json")
        try PublisherKey.testPolicy.sign(copied)
        #expect {
            _ = try ManagedPolicy.apply(path: copied, mustExist: true)
        } throws: { error in
            (error as? ConfigurationError)?.key == "machines" && errorMessage(error).contains("other machines")
        }

        let old = try policy(#"{"graceDays": 60, "expires": "2026-01-01T00:00:00Z"}"#, name: "old.json")
        try PublisherKey.testPolicy.sign(old)
        #expect {
            _ = try ManagedPolicy.apply(path: old, mustExist: true, now: try #require(ISODate.parse("2026-06-01T00:00:00Z")))
        } throws: { error in
            (error as? ConfigurationError)?.key == "expires" && errorMessage(error).contains("expired on 2026-01-01")
        }
        #expect(try ManagedPolicy.apply(path: old, mustExist: true, now: try #require(ISODate.parse("2025-06-01T00:00:00Z"))).graceDays == 60)
    }

    @Test func machinesMustBeMachineIDs() throws {
        let bad = try policy(#"{"machines": ["laptop"]}"#)
        #expect(throws: ConfigurationError.self) { _ = try ManagedPolicy.apply(path: bad, mustExist: true) }
    }
}
