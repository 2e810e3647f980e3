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
}
