import Foundation
import MapGate
import Testing

/// TileJSON as the server writes it: these exact bytes (keys sorted, slashes unescaped), and
/// read back the same.
@Suite struct TileJSONTests {
    static let tileJSON = TileJSON(
        tiles: ["http://127.0.0.1:8080/cities/{z}/{x}/{y}.pbf"], name: "Cities", version: "2", bounds: [-180, -85.0511, 180, 85.0511],
        center: [0, 0, 2], minzoom: 0, maxzoom: 6, format: "pbf", attribution: "<a href=\"https://www.naturalearthdata.com/\">Natural Earth</a>",
        vectorLayers: [.object(["id": .string("cities"), "fields": .object(["name": .string("String")])])])

    @Test func theServerWritesTheseBytes() throws {
        let text = String(decoding: try Self.tileJSON.encoded(), as: UTF8.self)
        #expect(
            text
                == #"{"attribution":"<a href=\"https://www.naturalearthdata.com/\">Natural Earth</a>","bounds":[-180,-85.0511,180,85.0511],"center":[0,0,2],"format":"pbf","maxzoom":6,"minzoom":0,"name":"Cities","scheme":"xyz","tilejson":"3.0.0","tiles":["http://127.0.0.1:8080/cities/{z}/{x}/{y}.pbf"],"vector_layers":[{"fields":{"name":"String"},"id":"cities"}],"version":"2"}"#,
            "\(text)")
    }

    @Test func whatIsWrittenIsReadBack() throws {
        #expect(try JSONDecoder().decode(TileJSON.self, from: Self.tileJSON.encoded()) == Self.tileJSON)
    }

    /// TileJSON's `version` is a semantic version (semver.org, whole): a publisher's "2026.11" is
    /// written "2026.11.0", numbers lose their leading zeros, a version with no such form is left
    /// out (the schema's pattern, not anchored, would let `1.2.3.4` pass: found by an attack).
    @Test(arguments: [
        ("1", "1.0.0"), ("2026.11", "2026.11.0"), ("1.2.3", "1.2.3"), ("2.0.1-beta", "2.0.1-beta"), ("1.0.0-rc.1+build.5", "1.0.0-rc.1+build.5"),
        ("2026.11.05", "2026.11.5"), ("01.02", "1.2.0"), ("v7", nil), ("2026-11", nil), ("", nil), ("1.2.3.4", nil), ("1.0.0-", nil),
        ("1.0.0-01", nil), ("1.0.0+", nil), ("٣", nil), ("1.٣.0", nil), ("1..2", nil), ("1.2.", nil), (" 1.2.3", nil),
    ] as [(String, String?)])
    func regionVersionsInTileJSONForm(_ version: String, _ expected: String?) {
        #expect(TileJSON.semanticVersion(version) == expected)
    }

    /// Bounds across the antimeridian (as MBTiles writers put them) are written as the band of
    /// latitudes they span: TileJSON's bounds "MUST NOT wrap around the ante-meridian", and
    /// MapLibre asked for no tile of such a region (found by an attack).
    @Test(arguments: [
        ([170, -45, -170, -30], [-180, -45, 180, -30]), ([179.5, -20, -179.5, -15], [-180, -20, 180, -15]),
        ([-10, 40, 10, 50], [-10, 40, 10, 50]), ([-180, -85, 180, 85], [-180, -85, 180, 85]), ([5, 5, 5, 5], [5, 5, 5, 5]),
    ] as [([Double], [Double])])
    func boundsAcrossTheAntimeridianAreUnwrapped(_ bounds: [Double], _ expected: [Double]) {
        #expect(TileJSON.unwrappedBounds(bounds) == expected)
    }

    /// The antimeridian named from its other side (a west edge at 180°, an east edge at −180°) is
    /// the same line: such bounds span the whole band, not no width (found by an attack:
    /// `180,-10,-180,10` was a region no degree wide).
    @Test(arguments: [
        ("180,-10,-180,10", [-180, -10, 180, 10]), ("180,-10,20,10", [-180, -10, 20, 10]), ("-20,-10,-180,10", [-20, -10, 180, 10]),
        ("170,-10,-170,10", [170, -10, -170, 10]), ("-180,-85,180,85", [-180, -85, 180, 85]), ("5,5,5,5", [5, 5, 5, 5]),
        ("181,0,10,10", nil), ("0,10,10,0", nil), ("nan,0,1,1", nil),
    ] as [(String, [Double]?)])
    func boundsNamingTheAntimeridianFromItsOtherSide(_ text: String, _ expected: [Double]?) {
        #expect(MBTilesFile.parseBounds(text) == expected)
        if let expected { #expect(TileJSON.unwrappedBounds(expected) == (text.hasPrefix("170") ? [-180, -10, 180, 10] : expected)) }
    }

    /// A writer's layers as the schema wants them: an id and fields, integer zooms.
    @Test func layersAreKeptAsTheSchemaRequires() {
        let layers: [JSONValue] = [
            .object(["id": .string("roads"), "minzoom": .string("2"), "maxzoom": .integer(14), "description": .integer(3)]),
            .object(["fields": .object(["name": .string("String")])]),
            .object(["id": .string("water"), "fields": .object(["depth": .integer(1), "name": .string("String")]), "maxzoom": .double(12)]),
            .string("not a layer"),
        ]
        #expect(
            TileJSON.schemaLayers(layers) == [
                .object(["id": .string("roads"), "fields": .object([:]), "maxzoom": .integer(14)]),
                .object(["id": .string("water"), "fields": .object(["name": .string("String")]), "maxzoom": .integer(12)]),
            ])
    }
}
