import Foundation

/// A MapLibre style (version 8) made from a vector region's `vector_layers`: every layer its own
/// colour, polygons as translucent fills with outlines, lines as lines, points as circles. No
/// fonts or sprites (no labels), so it works offline. Served as `/REGION/style.json` and used by
/// the viewer; any MapLibre client can load it.
public enum VectorStyle {
    /// One layer of the region's `vector_layers`.
    public struct Layer: Sendable, Equatable {
        public var id: String
        public var minzoom: Int?
        public var maxzoom: Int?
        /// `#rrggbb`, chosen from the layer's position so neighbours differ clearly.
        public var color: String
    }

    /// The layers listed in the metadata's `json` (`{"vector_layers": [{"id": …}, …]}`), in order;
    /// empty when there is none or it is not that shape.
    public static func layers(fromMetadataJSON text: String?) -> [Layer] {
        guard let text, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let entries = object["vector_layers"] as? [[String: Any]]
        else { return [] }
        var seen = Set<String>()
        var layers: [Layer] = []
        for entry in entries {
            guard let id = entry["id"] as? String, !id.isEmpty, id.count <= 256, seen.insert(id).inserted else { continue }
            layers.append(
                Layer(id: id, minzoom: entry["minzoom"] as? Int, maxzoom: entry["maxzoom"] as? Int, color: color(index: layers.count)))
            if layers.count == 256 { break }
        }
        return layers
    }

    /// The style object for `region` whose TileJSON is at `tileJSONURL`.
    public static func style(regionID: String, name: String, layers: [Layer], tileJSONURL: String) -> [String: Any] {
        var styleLayers: [[String: Any]] = [["id": "background", "type": "background", "paint": ["background-color": "#f4f3ee"]]]
        for layer in layers {
            func add(_ suffix: String, _ type: String, geometry: [String], paint: [String: Any]) {
                var entry: [String: Any] = [
                    "id": "\(layer.id)/\(suffix)", "type": type, "source": regionID, "source-layer": layer.id,
                    "filter": ["match", ["geometry-type"], geometry, true, false], "paint": paint,
                    "metadata": ["mapgate:layer": layer.id],
                ]
                if let minzoom = layer.minzoom { entry["minzoom"] = minzoom }
                if let maxzoom = layer.maxzoom { entry["maxzoom"] = maxzoom + 1 }
                styleLayers.append(entry)
            }
            add("fill", "fill", geometry: ["Polygon", "MultiPolygon"], paint: ["fill-color": layer.color, "fill-opacity": 0.35, "fill-outline-color": layer.color])
            add("line", "line", geometry: ["LineString", "MultiLineString"], paint: ["line-color": layer.color, "line-width": 1.5])
            add(
                "point", "circle", geometry: ["Point", "MultiPoint"],
                paint: ["circle-color": layer.color, "circle-radius": 4, "circle-stroke-color": "#ffffff", "circle-stroke-width": 1])
        }
        return [
            "version": 8, "name": name,
            "sources": [regionID: ["type": "vector", "url": tileJSONURL]],
            "layers": styleLayers,
        ]
    }

    /// Well-separated hues (the golden angle), saturated and mid-dark so they show on a light map.
    public static func color(index: Int) -> String {
        let hue = (Double(index) * 137.508).truncatingRemainder(dividingBy: 360) / 360
        let (r, g, b) = hsl(hue, 0.75, 0.45)
        return String(format: "#%02x%02x%02x", Int(r * 255), Int(g * 255), Int(b * 255))
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
