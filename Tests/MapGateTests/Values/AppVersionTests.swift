import MapGate
import Testing

@Suite struct AppVersionTests {
    @Test(arguments: [
        ("1.1", "1.1.0"), ("1.01", "1.1"), (" 2.0 ", "2"), ("1.0.0.0", "1"), ("0", "0.0"),
        // Labels the order cannot tell apart (found by Fuzz/targets/version.swift).
        ("1.0-rc.07", "1.0-rc.7"), ("1.0-RC1", "1.0-rc.1"), ("1.1b2.", "1.1b2"), ("1.0-rc-1", "1.0.0rc1"),
    ])
    func equal(_ left: String, _ right: String) throws {
        #expect(try AppVersion(left) == AppVersion(right))
        #expect(try AppVersion(left).hashValue == AppVersion(right).hashValue)
        #expect(!(try AppVersion(left) < AppVersion(right)))
        #expect(!(try AppVersion(right) < AppVersion(left)))
    }

    @Test(arguments: [
        ("1.9", "1.10"), ("0.9.10", "0.10.0"), ("2", "2.0.1"), ("1.0b1", "1.0"), ("1.0-rc.1", "1.0"),
        ("1.0-rc.2", "1.0-rc.10"), ("1.0b1", "1.0b2"), ("1.0-alpha", "1.0-beta"), ("1.0", "1.0.1-rc.1"),
        ("1.4.0", "1.5.0"), ("9.99", "10.0"), ("1.2.3", "1.2.4"), ("1.0-rc.1", "1.0.0.1"),
    ])
    func ordered(_ lower: String, _ higher: String) throws {
        #expect(try AppVersion(lower) < AppVersion(higher))
        #expect(!(try AppVersion(higher) < AppVersion(lower)))
        #expect(try AppVersion(lower) != AppVersion(higher))
    }

    @Test(arguments: ["", "abc", "v1.0", "1..2", "1.", ".1", "1.0 beta", "1.0-", "-1", "1.0_rc", "1,0"])
    func notAVersionIsAnError(_ text: String) {
        let error = #expect(throws: AppVersionError.self) { try AppVersion(text) }
        #expect(error?.kind == .badData)
    }

    @Test func theInstalledVersionParses() throws {
        #expect(try AppVersion(BuildInfo.version).text == BuildInfo.version)
    }
}
