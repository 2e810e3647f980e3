import Foundation
import MapGate
@testable import MapGateStorage
import TestSupport
import Testing

/// The style mapgate generates for a vector region (issue 27: areas had no labels; issue 28: one
/// Codable type, with a byte snapshot).
@Suite struct VectorStyleTests {
    static let layer = VectorStyle.Layer(id: "parks", minzoom: 2, maxzoom: 9, color: "#1b9e77", labelField: "name")

    @Test func pointsLinesAndAreasAreLabelledAboveEveryShape() throws {
        let style = VectorStyle.style(
            regionID: "r", name: "R", layers: [Self.layer], tileJSONURL: "http://h/r.json", glyphsURL: "http://h/fonts/{fontstack}/{range}.pbf",
            fonts: ["DejaVu Sans Book"])
        #expect(style.layers.map(\.id) == ["background", "parks/fill", "parks/line", "parks/point", "parks/label", "parks/line-label", "parks/area-label"])
        let area = try #require(style.layers.first { $0.id == "parks/area-label" })
        #expect(area.type == .symbol)
        #expect(area.filter?.arrayValue?[1] == MapLibreStyle.geometryFilter(["Polygon", "MultiPolygon"]))
        #expect(area.layout?.symbolPlacement == "point")
        #expect(area.layout?.textAnchor == nil, "an area's name sits inside it")
        #expect(area.minzoom == 2 && area.maxzoom == 10)
        #expect(style.glyphs == "http://h/fonts/{fontstack}/{range}.pbf")
    }

    @Test func noLabelsWithoutGlyphs() {
        let style = VectorStyle.style(regionID: "r", name: "R", layers: [Self.layer], tileJSONURL: "http://h/r.json")
        #expect(!style.layers.contains { $0.type == .symbol })
        #expect(style.glyphs == nil)
    }

    /// The style of the shared fixture's vector region (Natural Earth's cities: one layer with
    /// a `name` field, zooms 0 to 6), byte for byte as the server sends it: keys sorted, the
    /// expressions as MapLibre reads them, nothing MapLibre would not know.
    @Test func theCitiesRegionsStyleByteForByte() throws {
        let file = try MBTilesFile(path: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), immutable: true)
        let layers = VectorStyle.layers(fromMetadataJSON: try file.metadata()["json"])
        let base = "http://127.0.0.1:8080"
        let style = VectorStyle.style(
            regionID: "cities", name: "Cities", layers: layers, tileJSONURL: base + "/cities.json", glyphsURL: base + "/fonts/{fontstack}/{range}.pbf",
            fonts: ["DejaVu Sans Book"])
        let text = String(decoding: try ServerDocument.encode(style), as: UTF8.self)
        // One layer of the style a line (the lines are joined without a separator).
        let expected = #"""
            {"glyphs":"http://127.0.0.1:8080/fonts/{fontstack}/{range}.pbf","layers":[
            {"id":"background","paint":{"background-color":"#f4f3ee"},"type":"background"},
            {"filter":["match",["geometry-type"],["Polygon","MultiPolygon"],true,false],"id":"cities/fill","maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"fill-color":"#c81c1c","fill-opacity":0.35,"fill-outline-color":"#c81c1c"},"source":"cities","source-layer":"cities","type":"fill"},
            {"filter":["match",["geometry-type"],["LineString","MultiLineString"],true,false],"id":"cities/line","maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"line-color":"#c81c1c","line-width":1.5},"source":"cities","source-layer":"cities","type":"line"},
            {"filter":["match",["geometry-type"],["Point","MultiPoint"],true,false],"id":"cities/point","maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"circle-color":"#c81c1c","circle-radius":4,"circle-stroke-color":"#ffffff","circle-stroke-width":1},"source":"cities","source-layer":"cities","type":"circle"},
            {"filter":["all",["match",["geometry-type"],["Point","MultiPoint"],true,false],["has","name"]],"id":"cities/label","layout":{"symbol-placement":"point","text-anchor":"top","text-field":["to-string",["get","name"]],"text-font":["DejaVu Sans Book"],"text-offset":[0,0.6],"text-size":12},"maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"text-color":"#1a1a1a","text-halo-color":"#ffffff","text-halo-width":1.5},"source":"cities","source-layer":"cities","type":"symbol"},
            {"filter":["all",["match",["geometry-type"],["LineString","MultiLineString"],true,false],["has","name"]],"id":"cities/line-label","layout":{"symbol-placement":"line","text-field":["to-string",["get","name"]],"text-font":["DejaVu Sans Book"],"text-size":12},"maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"text-color":"#1a1a1a","text-halo-color":"#ffffff","text-halo-width":1.5},"source":"cities","source-layer":"cities","type":"symbol"},
            {"filter":["all",["match",["geometry-type"],["Polygon","MultiPolygon"],true,false],["has","name"]],"id":"cities/area-label","layout":{"symbol-placement":"point","text-field":["to-string",["get","name"]],"text-font":["DejaVu Sans Book"],"text-size":12},"maxzoom":7,"metadata":{"mapgate:layer":"cities"},"minzoom":0,"paint":{"text-color":"#1a1a1a","text-halo-color":"#ffffff","text-halo-width":1.5},"source":"cities","source-layer":"cities","type":"symbol"}],
            "name":"Cities","sources":{"cities":{"type":"vector","url":"http://127.0.0.1:8080/cities.json"}},"version":8}
            """#.split(separator: "\n").joined()
        #expect(text == expected)
        #expect(try JSONDecoder().decode(MapLibreStyle.self, from: Data(text.utf8)) == style)
    }

    /// A raster region's style: its tiles and nothing else.
    @Test func aRasterRegionsStyleByteForByte() throws {
        let style = MapLibreStyle.raster(regionID: "plain", name: "Plain", tileJSONURL: "http://h:1/plain.json")
        let text = String(decoding: try ServerDocument.encode(style), as: UTF8.self)
        #expect(
            text
                == #"{"layers":[{"id":"plain","source":"plain","type":"raster"}],"name":"Plain","sources":{"plain":{"tileSize":256,"type":"raster","url":"http://h:1/plain.json"}},"version":8}"#
        )
    }
}

/// Issue 37, part 4: the generated style labels in the reader's language where the data has it
/// (`name:ko` before `name`: 서울, not Seoul), and keeps the data's usual field for English.
@Suite struct VectorStyleLanguageTests {
    let layers = [VectorStyle.Layer(id: "places", minzoom: 0, maxzoom: 5, color: "#336699", labelField: "name")]

    func labelText(_ nameFields: [String]) throws -> JSONValue? {
        let style = VectorStyle.style(
            regionID: "r", name: "R", layers: layers, tileJSONURL: "http://127.0.0.1/r.json", glyphsURL: "http://127.0.0.1/fonts/{fontstack}/{range}.pbf",
            fonts: ["Noto Sans Regular"], nameFields: nameFields)
        return style.layers.first { $0.id == "places/label" }?.layout?.textField
    }

    @Test func englishKeepsTheUsualField() throws {
        #expect(try labelText([]) == .array([.string("to-string"), .array([.string("get"), .string("name")])]))
        #expect(VectorStyle.nameFields(forLanguage: "en").isEmpty)
    }

    @Test(arguments: [("ko", ["name:ko"]), ("ja", ["name:ja"]), ("zh-TW", ["name:zh-Hant", "name:zh-TW", "name:zh"]), ("zh-CN", ["name:zh-Hans", "name:zh-CN", "name:zh"])])
    func aReaderOfAnotherLanguageGetsThatNameFirst(language: String, fields: [String]) throws {
        #expect(VectorStyle.nameFields(forLanguage: language) == fields)
        let expected = JSONValue.array(
            [.string("to-string"), .array([.string("coalesce")] + (fields + ["name"]).map { .array([.string("get"), .string($0)]) })])
        #expect(try labelText(fields) == expected)
    }

    /// The viewer's label switch (`?labels=`): the data's own names, English, or a CJK language;
    /// nothing else.
    @Test func theViewersSwitchNamesItsLanguages() {
        #expect(VectorStyle.nameFields(forLabels: "local") == [])
        #expect(VectorStyle.nameFields(forLabels: "en") == ["name:en", "name_en"])
        #expect(VectorStyle.nameFields(forLabels: "ko") == ["name:ko"])
        #expect(VectorStyle.nameFields(forLabels: "zh-TW") == VectorStyle.nameFields(forLanguage: "zh-TW"))
        for unknown in ["", "fr", "../x", "KO"] { #expect(VectorStyle.nameFields(forLabels: unknown) == nil, "\(unknown)") }
    }

    /// Where several CJK faces are installed, the reader's comes first (直 and 骨 differ between
    /// them); the Latin face stays first, and no face is named twice.
    @Test(arguments: [
        ("ja", "Noto Sans CJK JP Regular"), ("ko", "Noto Sans CJK KR Regular"), ("zh-TW", "Noto Sans CJK TC Regular"),
        ("zh-CN", "Noto Sans CJK SC Regular"), ("en", "Noto Sans CJK SC Regular"),
    ])
    func theReadersCJKFaceComesFirst(language: String, face: String) {
        let installed = ["DejaVu Sans Book", "Noto Sans CJK JP Regular", "Noto Sans CJK KR Regular", "Noto Sans CJK SC Regular", "Noto Sans CJK TC Regular"]
        let fonts = VectorStyle.labelFonts(among: installed, language: language)
        #expect(fonts.first == "DejaVu Sans Book")
        #expect(fonts.dropFirst().first == face, "\(fonts)")
        #expect(Set(fonts).count == fonts.count)
        #expect(Set(fonts) == Set(installed))
    }
}
