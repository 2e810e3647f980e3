import Foundation
@testable import MapGate
import Testing

/// The style mapgate generates for a vector region (issue 27: areas had no labels).
@Suite struct VectorStyleTests {
    static let layer = VectorStyle.Layer(id: "parks", minzoom: 2, maxzoom: 9, color: "#1b9e77", labelField: "name")

    func layers(_ style: [String: Any]) -> [[String: Any]] { style["layers"] as? [[String: Any]] ?? [] }

    @Test func pointsLinesAndAreasAreLabelledAboveEveryShape() throws {
        let style = VectorStyle.style(
            regionID: "r", name: "R", layers: [Self.layer], tileJSONURL: "http://h/r.json", glyphsURL: "http://h/fonts/{fontstack}/{range}.pbf",
            fonts: ["DejaVu Sans Book"])
        let all = layers(style)
        let ids = all.compactMap { $0["id"] as? String }
        #expect(ids == ["background", "parks/fill", "parks/line", "parks/point", "parks/label", "parks/line-label", "parks/area-label"])
        let area = try #require(all.first { $0["id"] as? String == "parks/area-label" })
        let filter = try #require(area["filter"] as? [Any])
        let geometry = try #require((filter[1] as? [Any])?[2] as? [String])
        #expect(geometry == ["Polygon", "MultiPolygon"])
        let layout = try #require(area["layout"] as? [String: Any])
        #expect(layout["symbol-placement"] as? String == "point")
        #expect(layout["text-anchor"] == nil, "an area's name sits inside it")
        #expect(area["minzoom"] as? Int == 2 && area["maxzoom"] as? Int == 10)
    }

    @Test func noLabelsWithoutGlyphs() {
        let style = VectorStyle.style(regionID: "r", name: "R", layers: [Self.layer], tileJSONURL: "http://h/r.json")
        #expect(!layers(style).contains { ($0["type"] as? String) == "symbol" })
    }
}
