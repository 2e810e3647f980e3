import FoundationEssentials
import MapGateBase

/// The ``MapLibreStyle`` made from a vector region's `vector_layers`: every layer its own
/// colour, polygons as translucent fills with outlines, lines as lines, points as circles, and —
/// when a font is given — the names of points and lines as labels, for every layer with a
/// name-like field (`name`, `name:<lang>`, `NAME`, …), with glyphs from this server. No sprites.
/// Served as `/REGION/style.json` and used by the viewer; any MapLibre client can load it.
public enum VectorStyle {
    /// One layer of the region's `vector_layers`.
    public struct Layer: Sendable, Equatable {
        public var id: String
        public var minzoom: Int?
        public var maxzoom: Int?
        /// `#rrggbb`, chosen from the layer's position so neighbours differ clearly.
        public var color: String
        /// The field whose value labels the layer's features, if it has a name-like one.
        public var labelField: String?
    }

    /// The name-like field of a layer's `fields`: `name`, then `name:en`, `name_en`, then any
    /// `name:<lang>`, then `NAME`, `Name`.
    static func labelField(in fields: [String: JSONValue]?) -> String? {
        guard let fields else { return nil }
        let keys = fields.keys.sorted()
        for preferred in ["name", "name:en", "name_en", "name:latin"] where fields[preferred] != nil { return preferred }
        if let local = keys.first(where: { $0.hasPrefix("name:") || $0.hasPrefix("name_") }) { return local }
        return keys.first { $0 == "NAME" || $0 == "Name" }
    }

    /// The name fields a reader of `language` (a page's BCP 47 tag: `ja`, `ko`, `zh-TW`, `zh-CN`)
    /// reads first, as OpenStreetMap's and OpenMapTiles' data name them; none for English, whose
    /// style keeps the data's usual field.
    public static func nameFields(forLanguage language: String) -> [String] {
        switch language {
        case "ja": ["name:ja"]
        case "ko": ["name:ko"]
        case "zh-TW": ["name:zh-Hant", "name:zh-TW", "name:zh"]
        case "zh-CN": ["name:zh-Hans", "name:zh-CN", "name:zh"]
        default: []
        }
    }

    /// The label languages the viewer's switch offers (`/REGION/style.json?labels=…`), with the
    /// name fields each reads first: `local` is the data's own `name`.
    public static let labelLanguages = ["local", "en", "ja", "ko", "zh-TW", "zh-CN"]

    /// The name fields of a label language chosen in the viewer's switch (``labelLanguages``); nil
    /// for one it does not offer.
    public static func nameFields(forLabels labels: String) -> [String]? {
        switch labels {
        case "local": []
        case "en": ["name:en", "name_en"]
        case "ja", "ko", "zh-TW", "zh-CN": nameFields(forLanguage: labels)
        default: nil
        }
    }

    /// The layers listed in the metadata's `json` (`{"vector_layers": [{"id": …}, …]}`), in order;
    /// empty when there is none or it is not that shape.
    public static func layers(fromMetadataJSON text: String?) -> [Layer] {
        guard let text, let object = try? JSONValue(parsing: Data(text.utf8)), let list = object["vector_layers"]?.arrayValue,
            case let entries = list.compactMap(\.objectValue), entries.count == list.count
        else { return [] }
        var seen = Set<String>()
        var layers: [Layer] = []
        for entry in entries {
            guard let id = entry["id"]?.stringValue, !id.isEmpty, id.count <= 256, seen.insert(id).inserted else { continue }
            layers.append(
                Layer(
                    id: id, minzoom: entry["minzoom"]?.int, maxzoom: entry["maxzoom"]?.int, color: color(index: layers.count),
                    labelField: labelField(in: entry["fields"]?.objectValue)))
            if layers.count == 256 { break }
        }
        return layers
    }

    /// The style for `region` whose TileJSON is at `tileJSONURL`.
    ///
    /// - Parameters:
    ///   - glyphsURL: MapLibre's glyph URL template (`…/fonts/{fontstack}/{range}.pbf`); with
    ///     `fonts` (a fontstack, see ``labelFonts(among:)``), labels are drawn in them. Without
    ///     them, no labels.
    ///   - nameFields: the reader's own name fields, first found first (`name:ja`; see
    ///     ``nameFields(forLanguage:)``): a label shows the first the feature has, else its usual
    ///     field. Empty: the usual field alone (the English page's style, byte for byte as before).
    public static func style(
        regionID: String, name: String, layers: [Layer], tileJSONURL: String, glyphsURL: String? = nil, fonts: [String] = [],
        nameFields: [String] = []
    ) -> MapLibreStyle {
        var styleLayers = [MapLibreStyle.Layer(id: "background", type: .background, paint: .init(backgroundColor: "#f4f3ee"))]
        /// The style layer `layer/suffix`: `layer`'s features that pass `filter`, over the layer's zooms.
        func draw(
            _ layer: Layer, _ suffix: String, _ type: MapLibreStyle.Layer.Kind, filter: JSONValue, layout: MapLibreStyle.Layout? = nil,
            paint: MapLibreStyle.Paint
        ) -> MapLibreStyle.Layer {
            MapLibreStyle.Layer(
                id: "\(layer.id)/\(suffix)", type: type, source: regionID, sourceLayer: layer.id, minzoom: layer.minzoom,
                maxzoom: layer.maxzoom.map { $0 + 1 }, filter: filter, layout: layout, paint: paint, metadata: ["mapgate:layer": layer.id])
        }
        for layer in layers {
            let color = layer.color
            styleLayers += [
                draw(
                    layer, "fill", .fill, filter: MapLibreStyle.geometryFilter(["Polygon", "MultiPolygon"]),
                    paint: .init(fillColor: color, fillOpacity: 0.35, fillOutlineColor: color)),
                draw(
                    layer, "line", .line, filter: MapLibreStyle.geometryFilter(["LineString", "MultiLineString"]),
                    paint: .init(lineColor: color, lineWidth: 1.5)),
                draw(
                    layer, "point", .circle, filter: MapLibreStyle.geometryFilter(["Point", "MultiPoint"]),
                    paint: .init(circleColor: color, circleRadius: 4, circleStrokeColor: "#ffffff", circleStrokeWidth: 1)),
            ]
        }
        // Labels above every shape, so no fill hides a name.
        if !fonts.isEmpty, glyphsURL != nil {
            for layer in layers {
                guard let field = layer.labelField else { continue }
                for (suffix, geometry, placement) in [
                    ("label", ["Point", "MultiPoint"], "point"), ("line-label", ["LineString", "MultiLineString"], "line"),
                    ("area-label", ["Polygon", "MultiPolygon"], "point"),
                ] {
                    let names = (nameFields.filter { $0 != field } + [field]).map { JSONValue.array([.string("get"), .string($0)]) }
                    let text = names.count == 1 ? names[0] : .array([.string("coalesce")] + names)
                    var layout = MapLibreStyle.Layout(
                        textField: .array([.string("to-string"), text]), textFont: fonts, textSize: 12, symbolPlacement: placement)
                    if suffix == "label" {
                        // Beside the point's circle; an area's name sits inside it.
                        layout.textAnchor = "top"
                        layout.textOffset = [0, 0.6]
                    }
                    let filter = JSONValue.array([.string("all"), MapLibreStyle.geometryFilter(geometry), .array([.string("has"), .string(field)])])
                    styleLayers.append(
                        draw(
                            layer, suffix, .symbol, filter: filter, layout: layout,
                            paint: .init(textColor: labelColor, textHaloColor: "#ffffff", textHaloWidth: 1.5)))
                }
            }
        }
        return MapLibreStyle(
            name: name, glyphs: fonts.isEmpty ? nil : glyphsURL, sources: [regionID: MapLibreStyle.Source(type: .vector, url: tileJSONURL)],
            layers: styleLayers)
    }

    /// The labels' colour: near black, with a white halo.
    public static let labelColor = "#1a1a1a"

    /// The fontstack labels use: the first installed of a few common Latin fonts (else the first
    /// font there is), then every installed font of a few that cover other scripts (CJK, Hangul,
    /// Arabic, …), so that a name in any of them finds its glyphs (the glyph server tries the
    /// fonts in order for each character). Empty when no font is installed.
    ///
    /// Chinese, Japanese and Korean share code points whose glyphs differ by language (直, 骨,
    /// 誤…): where several CJK faces are installed, the reader's comes first (`language`: a page's
    /// BCP 47 tag, or a label language of the viewer's switch).
    public static func labelFonts(among names: [String], language: String = "en") -> [String] {
        let latin = ["Noto Sans Regular", "DejaVu Sans Book", "Open Sans Regular", "Liberation Sans Regular"].first(where: names.contains) ?? names.first
        let ownCJK: [String] =
            switch language {
            case "ja": ["Noto Sans CJK JP Regular"]
            case "ko": ["Noto Sans CJK KR Regular"]
            case "zh-TW": ["Noto Sans CJK TC Regular", "Noto Sans CJK HK Regular"]
            case "zh-CN": ["Noto Sans CJK SC Regular"]
            default: []
            }
        let others = ownCJK + [
            "Noto Sans CJK SC Regular", "Noto Sans CJK JP Regular", "Noto Sans CJK KR Regular", "Noto Sans CJK TC Regular",
            "WenQuanYi Micro Hei Regular", "WenQuanYi Zen Hei Regular", "Noto Sans Arabic Regular", "Noto Sans Hebrew Regular",
            "Noto Sans Devanagari Regular", "Noto Sans Thai Regular", "DejaVu Sans Book",
        ]
        var seen: Set<String> = latin.map { [$0] } ?? []
        return (latin.map { [$0] } ?? []) + others.filter { names.contains($0) && seen.insert($0).inserted }
    }

    /// Well-separated hues (the golden angle), saturated and mid-dark so they show on a light map.
    public static func color(index: Int) -> String {
        let hue = (Double(index) * 137.508).truncatingRemainder(dividingBy: 360) / 360
        let (r, g, b) = hsl(hue, 0.75, 0.45)
        return String(cFormat: "#%02lx%02lx%02lx", Int(r * 255), Int(g * 255), Int(b * 255))
    }

    private static func hsl(_ h: Double, _ s: Double, _ l: Double) -> (Double, Double, Double) {
        let q = l < 0.5 ? l * (1 + s) : l + s - l * s
        let p = 2 * l - q
        func channel(_ t: Double) -> Double {
            var t = t
            if t < 0 { t += 1 }
            if t > 1 { t -= 1 }
            if t < 1 / 6 { return p + (q - p) * 6 * t }
            if t < 1 / 2 { return q }
            if t < 2 / 3 { return p + (q - p) * (2 / 3 - t) * 6 }
            return p
        }
        return (channel(h + 1 / 3), channel(h), channel(h - 1 / 3))
    }
}
