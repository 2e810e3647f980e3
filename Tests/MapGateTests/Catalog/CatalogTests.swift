import Foundation
import MapGate
import Testing

@Suite struct CatalogTests {
    static let hash = String(repeating: "0f", count: 32)

    func region(_ overrides: [String: Any] = [:]) -> [String: Any] {
        var fields: [String: Any] = [
            "id": "kr-seoul", "name": "Seoul", "version": "2026.11", "url": "packages/kr-seoul.mbtiles.gz", "size": 1000,
            "sha256": Self.hash, "installedSize": 4000, "format": "pbf", "bounds": [126.7, 37.4, 127.2, 37.7], "minzoom": 0,
            "maxzoom": 14,
        ]
        fields.merge(overrides) { $1 }
        return fields
    }

    func parse(regions: [[String: Any]], extra: [String: Any] = [:]) throws -> Catalog {
        var object: [String: Any] = ["formatVersion": 1, "publisher": "Example Maps", "generated": "2026-11-01T00:00:00Z", "regions": regions]
        object.merge(extra) { $1 }
        return try Catalog.parse(try JSONSerialization.data(withJSONObject: object), sourceURL: "https://maps.example.com/v1/catalog.json")
    }

    /// The catalog parses; the one bad entry among good ones is rejected with its reason, and
    /// the good ones stay.
    func rejection(of bad: [String: Any]) throws -> CatalogError? {
        let good = region(["id": "good"])
        let catalog = try parse(regions: [good, bad])
        #expect(catalog.regions.map(\.id) == ["good"])
        return catalog.rejected.first
    }

    /// A key twice in one object (found by an attack: `"serial": 5, "serial": 900` and an
    /// `expires` twice, signed as they were): Foundation's decoder took the first values, jq and
    /// Python the last, so one signed catalog meant two things. Refused, naming the key, escaped
    /// or not.
    @Test(arguments: [
        (#"{"formatVersion": 1, "serial": 5, "serial": 900, "regions": []}"#, "serial"),
        (#"{"formatVersion": 1, "serial": 5, "ser\u0069al": 900, "regions": []}"#, "serial"),
        (#"{"formatVersion": 1, "regions": [{"id": "a", "id": "b"}]}"#, "id"),
        (#"{"formatVersion": 1, "regions": [{"id": "a"}, {"id": "b", "x": {"y": [1, -2.5e3, true, null, "é"], "y": {}}}]}"#, "y"),
    ])
    func aKeyTwiceInOneObjectIsRefused(_ text: String, _ key: String) throws {
        let error = #expect(throws: CatalogError.self) { try Catalog.parse(Data(text.utf8), sourceURL: "https://x/catalog.json") }
        #expect(error?.reason.contains("the key \"\(key)\" appears twice in one object") == true, "\(String(describing: error))")
        #expect(JSONValue.duplicateKey(in: Data(#"{"a": {"b": 1}, "c": {"b": 2}}"#.utf8)) == nil)
        // Escaped first or second, past 32 keys, and keys that only share a prefix.
        #expect(JSONValue.duplicateKey(in: Data(#"{"ser\u0069al": 1, "serial": 2}"#.utf8)) == "serial")
        let many = (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        #expect(JSONValue.duplicateKey(in: Data("{\(many), \"k3\": 0}".utf8)) == "k3")
        #expect(JSONValue.duplicateKey(in: Data("{\(many)}".utf8)) == nil)
        #expect(JSONValue.duplicateKey(in: Data(#"{"ab": 1, "a": 2, "abc": 3, "": 4, "\"": 5}"#.utf8)) == nil)
    }

    @Test func validCatalogIsReadAndURLsResolved() throws {
        let catalog = try parse(regions: [
            region(), region(["id": "jp-tokyo", "url": "https://cdn.example.com/jp.mbtiles", "format": "png"]),
            region(["id": "local", "url": "/abs/path.mbtiles"]),
        ])
        #expect(catalog.publisher == "Example Maps")
        #expect(catalog.generated == Date(timeIntervalSince1970: 1_793_491_200))
        #expect(catalog.regions.count == 3)
        #expect(catalog.region("kr-seoul")?.url == "https://maps.example.com/v1/packages/kr-seoul.mbtiles.gz")
        #expect(catalog.region("jp-tokyo")?.url == "https://cdn.example.com/jp.mbtiles")
        #expect(catalog.region("local")?.url == "https://maps.example.com/abs/path.mbtiles")
        #expect(catalog.region("kr-seoul")?.format == .pbf)
        #expect(catalog.region("kr-seoul")?.bounds == [126.7, 37.4, 127.2, 37.7])
    }

    @Test(arguments: ["../etc", "a/b", "/abs", "..", ".", "Seoul", "a b", "-lead", "_lead", "", String(repeating: "a", count: 65), "a\\b", "é"])
    func invalidRegionIDIsRejected(id: String) {
        let error = try? rejection(of: region(["id": id]))
        #expect(error?.reason.contains("invalid id") == true, "\(error?.reason ?? "")")
    }

    @Test(arguments: ["a", "kr-seoul", "v1.2_x", "0", String(repeating: "z", count: 64)])
    func validRegionIDIsAccepted(id: String) {
        #expect(Catalog.isValidRegionID(id))
    }

    @Test(arguments: [
        (#"{"size": -1}"#, "size -1 is out of range"),
        (#"{"size": 0}"#, "out of range"),
        (#"{"installedSize": 1e15}"#, "out of range"),
        (#"{"size": "1000"}"#, "size is not an integer"),
        (#"{"sha256": "abc"}"#, "is not 64 hex digits"),
        (#"{"sha256": "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg"}"#, "is not 64 hex digits"),
        // Fullwidth digits are hex digits to Character.isHexDigit (found by the catalog fuzz target).
        (#"{"sha256": "\#(String(repeating: "\u{FF10}", count: 64))"}"#, "is not 64 hex digits"),
        (#"{"url": "ftp://example.com/x.mbtiles"}"#, "url scheme \"ftp\""),
        (#"{"url": "javascript:alert(1)"}"#, "url scheme"),
        (#"{"format": "gif"}"#, "format \"gif\""),
        (#"{"minzoom": 5, "maxzoom": 2}"#, "minzoom 5 is above maxzoom 2"),
        (#"{"maxzoom": 31}"#, "maxzoom must be"),
        (#"{"bounds": [1, 2, 3]}"#, "bounds must be"),
        (#"{"bounds": [0, -95, 10, 10]}"#, "outside the world"),
        (#"{"version": ""}"#, "version is empty"),
        (#"{"minimumAppVersion": "soon"}"#, "not a version"),
    ])
    func badRegionFieldIsRejectedNamingTheRegion(overrides: String, reason: String) throws {
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(overrides.utf8)) as? [String: Any])
        let error = try rejection(of: region(fields))
        #expect(error?.region == "kr-seoul")
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
        #expect(error?.localizedDescription.hasPrefix("catalog https://maps.example.com/v1/catalog.json: region kr-seoul:") == true)
    }

    /// Foundation's decoder stops at a number that does not fit an integer field with only "The
    /// given data was not valid JSON." (found by an attack on a signed catalog): the catalog is
    /// refused, naming the region and the key, as for the other mistakes in a field.
    @Test(arguments: [
        (#""installedSize": 106496.5"#, "kr-seoul", "installedSize 106496.5 is not an integer"),
        (#""size": 34420000000000000000000"#, "kr-seoul", "size 3.442e+22 is out of range for an integer"),
        (#""minzoom": 0.5"#, "kr-seoul", "minzoom 0.5 is not an integer"),
    ])
    func aNumberThatIsNoIntegerIsNamedWithItsRegion(field: String, region id: String, reason: String) throws {
        var fields = region()
        let key = String(field.split(separator: "\"")[0])
        fields.removeValue(forKey: key)
        let entry = String(decoding: try JSONSerialization.data(withJSONObject: fields, options: .sortedKeys), as: UTF8.self)
        let text = #"{"formatVersion": 1, "publisher": "P", "regions": [\#(entry.dropLast()), \#(field)}]}"#
        let error = #expect(throws: CatalogError.self) { try Catalog.parse(Data(text.utf8), sourceURL: "https://x/catalog.json") }
        #expect(error?.region == id)
        #expect(error?.reason == reason, "\(error?.reason ?? "")")
        #expect(error?.localizedDescription.contains("not valid JSON") == false)
    }

    @Test func aTopLevelNumberThatIsNoIntegerIsNamed() throws {
        let text = #"{"formatVersion": 1, "publisher": "P", "serial": 1.5, "regions": []}"#
        let error = #expect(throws: CatalogError.self) { try Catalog.parse(Data(text.utf8), sourceURL: "https://x/catalog.json") }
        #expect(error?.region == nil)
        #expect(error?.reason == "serial 1.5 is not an integer", "\(error?.reason ?? "")")
    }

    @Test func duplicateIDIsRejectedBothTimes() throws {
        let catalog = try parse(regions: [region(), region(), region(["id": "other"])])
        #expect(catalog.regions.map(\.id) == ["other"])
        #expect(catalog.rejection(of: "kr-seoul")?.reason == "duplicate id")
    }

    @Test func truncatedJSONSaysWhereItStopped() {
        let error = #expect(throws: CatalogError.self) {
            try Catalog.parse(Data(#"{"formatVersion": 1, "regions": [{"id": "a""#.utf8), sourceURL: "https://x/catalog.json")
        }
        #expect(error?.reason.hasPrefix("not valid JSON: ") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("truncated?") == true)
    }

    @Test(arguments: [
        (#"{"formatVersion": 2}"#, "formatVersion 2 is not supported"),
        (#"{"formatVersion": "1"}"#, "formatVersion is not an integer"),
        (#"{"publisher": 3}"#, "publisher is not a string"),
        (#"{"regions": "none"}"#, "regions is not an array"),
        (#"{"minimumAppVersion": "x"}"#, "not a version"),
    ])
    func badTopLevelIsRejected(extraJSON: String, reason: String) throws {
        let extra = try #require(try JSONSerialization.jsonObject(with: Data(extraJSON.utf8)) as? [String: Any])
        let error = #expect(throws: CatalogError.self) { try parse(regions: [region()], extra: extra) }
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
        #expect(error?.kind == .badData)
    }
}
