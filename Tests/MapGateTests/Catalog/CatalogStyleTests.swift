import Foundation
import MapGate
import Testing

/// The catalog's `styles`: each entry checked as strictly as a region's; a bad one is rejected
/// with its reason and leaves the regions and the other styles alone.
@Suite struct CatalogStyleTests {
    let tests = CatalogTests()

    func style(_ overrides: [String: Any] = [:]) -> [String: Any] {
        var fields: [String: Any] = [
            "id": "night", "name": "Night", "version": "0123456789ab", "url": "packages/night-0123456789ab.style.json.gz",
            "size": 900, "sha256": CatalogTests.hash, "installedSize": 3000, "regions": ["kr-seoul"],
        ]
        fields.merge(overrides) { $1 }
        return fields
    }

    @Test func aStyleIsReadWithItsURLResolved() throws {
        let catalog = try tests.parse(regions: [tests.region()], extra: ["styles": [style()]])
        let night = try #require(catalog.styles.first)
        #expect(night.url == "https://maps.example.com/v1/packages/night-0123456789ab.style.json.gz")
        #expect(night.regions == ["kr-seoul"])
        #expect(catalog.rejectedStyles.isEmpty)
    }

    @Test(arguments: [
        (#"{"id": "Night Mode"}"#, "id is not of the form"),
        (#"{"sha256": "abc"}"#, "sha256 \"abc\" is not 64 hex digits"),
        (#"{"regions": []}"#, "regions must be a non-empty list of region ids"),
        (#"{"regions": ["../x"]}"#, "regions must be a non-empty list of region ids"),
        (#"{"size": 0}"#, "size 0 is out of range"),
        (#"{"installedSize": 1e12}"#, "installedSize 1000000000000 is out of range"),
        (#"{"version": "../1"}"#, "version \"../1\" is not of the form"),
        (#"{"url": "ftp://x.example/a"}"#, "url scheme \"ftp\" is not http, https or file"),
    ])
    func aBadStyleEntryIsRejectedAlone(overrides: String, reason: String) throws {
        let bad = try #require(try JSONSerialization.jsonObject(with: Data(overrides.utf8)) as? [String: Any])
        let catalog = try tests.parse(regions: [tests.region()], extra: ["styles": [style(["id": "good"]), style(bad)]])
        #expect(catalog.regions.map(\.id) == ["kr-seoul"])
        #expect(catalog.styles.map(\.id) == ["good"])
        let rejection = try #require(catalog.rejectedStyles.first)
        #expect(rejection.localizedDescription.contains(reason), "\(rejection.localizedDescription)")
    }

    @Test func aDuplicatedStyleIsRejectedBothTimes() throws {
        let catalog = try tests.parse(regions: [tests.region()], extra: ["styles": [style(), style(["name": "Other"])]])
        #expect(catalog.styles.isEmpty)
        #expect(catalog.rejectedStyles.first?.localizedDescription.contains("style night: duplicate id") == true)
    }

    @Test func stylesThatAreNotAListAreRejectedAndTheRegionsStay() throws {
        let catalog = try tests.parse(regions: [tests.region()], extra: ["styles": "night"])
        #expect(catalog.regions.count == 1)
        #expect(catalog.rejectedStyles.first?.localizedDescription.contains("styles is not an array") == true)
    }
}
