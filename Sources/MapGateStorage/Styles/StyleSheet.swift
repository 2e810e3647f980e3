import FoundationEssentials
import MapGateBase

/// A publisher's MapLibre style (style spec version 8), checked and rewritten to be drawn offline
/// from mapgate's server: each source names a region of the catalog (`"url": "mbtiles://REGION"`,
/// tileserver-gl's convention) and becomes `local://REGION.json`; `glyphs` becomes mapgate's glyph
/// route and `sprite` the style's own sprites. The server turns `local://` into its own address.
///
/// What would need the network is refused: tile URLs, GeoJSON by URL, image and video sources.
public enum StyleSheet {
    /// The scheme of URLs the server makes absolute (`local://fonts/…` → `http://127.0.0.1:8080/fonts/…`).
    public static let localScheme = "local://"
    /// A source's URL naming a region of the catalog.
    public static let regionScheme = "mbtiles://"
    public static let glyphsURL = localScheme + "fonts/{fontstack}/{range}.pbf"
    package static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The largest `style.json` read (real styles are tens to hundreds of kilobytes).
    public static let maximumSize = 4 << 20
    public static let maximumLayers = 10_000

    public static func spriteURL(style: String) -> String { localScheme + "styles/\(style)/sprite" }

    /// What ``rewrite(_:style:regions:hasSprite:)`` made: the style as JSON text and the regions it draws.
    public struct Rewritten: Sendable, Equatable {
        public var text: String
        public var regions: [String]
    }

    /// Checks a publisher's `style.json` and points it at mapgate's local URLs.
    /// - Parameters:
    ///   - regions: the regions of the catalog being published, with their tile formats.
    ///   - hasSprite: whether the style's folder holds `sprite.json` and `sprite.png`.
    public static func rewrite(_ data: Data, style id: String, regions: [String: TileFormat], hasSprite: Bool) throws -> Rewritten {
        func fail(_ reason: String) -> StyleError { StyleError(style: id, reason: reason) }
        guard data.count <= maximumSize else { throw fail(L.localized("style.json is larger than %1$s", "\(ByteCount.text(Int64(maximumSize)))")) }
        var style = try object(data, fail: fail)
        var used = Set<String>()
        var sources = style["sources"]?.objectValue ?? [:]
        for name in sources.keys.sorted() {
            guard var source = sources[name]?.objectValue, let type = source["type"]?.stringValue else {
                throw fail(L.localized("source \"%1$s\" has no type", "\(name)"))
            }
            func where_(_ reason: String) -> StyleError { fail(L.localized("source \"%1$s\": %2$s", "\(name)", "\(reason)")) }
            switch type {
            case "vector", "raster", "raster-dem":
                if source["tiles"] != nil {
                    throw where_(L.localized("\"tiles\" would fetch tiles from a server; name a region of the catalog instead (\"url\": \"mbtiles://REGION\")"))
                }
                guard let url = source["url"]?.stringValue, url.hasPrefix(regionScheme) else {
                    throw where_(L.localized("\"url\" must name a region of the catalog (\"mbtiles://REGION\"), not %1$s", "\(describe(source["url"]))"))
                }
                let region = String(url.dropFirst(regionScheme.count))
                guard let format = regions[region] else {
                    let offered = regions.keys.sorted().joined(separator: ", ")
                    throw where_(L.localized("region \"%1$s\" is not in this catalog (regions: %2$s)", "\(region)", "\(offered.isEmpty ? "none" : offered)"))
                }
                guard (type == "vector") == (format == .pbf) else {
                    throw where_(L.localized("a %1$s source cannot draw region \"%2$s\", whose tiles are %3$s", "\(type)", "\(region)", "\(format.rawValue)"))
                }
                source["url"] = .string(localScheme + region + ".json")
                used.insert(region)
            case "geojson":
                guard source["data"]?.objectValue != nil else {
                    throw where_(L.localized("GeoJSON must be inline (\"data\": {…}): a URL would be fetched from the network"))
                }
            case "image", "video":
                throw where_(L.localized("%1$s sources fetch from the network, which offline maps cannot", "\(type)"))
            default:
                throw where_(L.localized("unknown type \"%1$s\"", "\(type)"))
            }
            sources[name] = .object(source)
        }
        guard !used.isEmpty else { throw fail(L.localized("no source names a region of the catalog (\"url\": \"mbtiles://REGION\")")) }
        style["sources"] = .object(sources)

        guard let layers = style["layers"]?.arrayValue else { throw fail(L.localized("\"layers\" is missing or not an array")) }
        guard layers.count <= maximumLayers else { throw fail(L.localized("more than %1$s layers", "\(maximumLayers)")) }
        var layerIDs = Set<String>()
        for (index, entry) in layers.enumerated() {
            guard let layer = entry.objectValue, let layerID = layer["id"]?.stringValue, layer["type"]?.stringValue != nil else {
                throw fail(L.localized("layers[%1$s] is not an object with an id and a type", "\(index)"))
            }
            guard layerIDs.insert(layerID).inserted else { throw fail(L.localized("two layers have the id \"%1$s\"", "\(layerID)")) }
            if let source = layer["source"] {
                guard let name = source.stringValue, sources[name] != nil else {
                    throw fail(L.localized("layer \"%1$s\" draws source %2$s, which the style does not define", "\(layerID)", "\(describe(source))"))
                }
            }
        }

        style["glyphs"] = .string(glyphsURL)
        switch style["sprite"] {
        case nil:
            if hasSprite { style["sprite"] = .string(spriteURL(style: id)) }
        case .string?:
            guard hasSprite else { throw fail(L.localized("\"sprite\" is set but sprite.json and sprite.png are not beside style.json")) }
            style["sprite"] = .string(spriteURL(style: id))
        default:
            throw fail(L.localized("\"sprite\" must be one URL (a list of sprites is not supported)"))
        }
        let text = try JSONValue.object(style).encoded([.sortedKeys, .withoutEscapingSlashes])
        return Rewritten(text: String(decoding: text, as: UTF8.self), regions: used.sorted())
    }

    /// Checks an installed style: a version 8 style whose sources are all local, each drawing one
    /// of the `regions` the style declares (a package made by another tool, or by hand, gets no
    /// further than this).
    static func checkInstalled(_ text: String, style id: String, regions: [String]) throws {
        func fail(_ reason: String) -> StyleError { StyleError(style: id, reason: reason) }
        let style = try object(Data(text.utf8), fail: fail)
        for (name, value) in (style["sources"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let source = value.objectValue else { throw fail(L.localized("source \"%1$s\" is not an object", "\(name)")) }
            if source["type"]?.stringValue == "geojson", source["data"]?.objectValue != nil { continue }
            let url = source["url"]?.stringValue ?? ""
            if source["tiles"] != nil || url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") {
                let what = source["tiles"] != nil ? L.localized("fetches \"tiles\" from a server") : L.localized("is a remote URL (%1$s)", "\(TerminalText.inline(url))")
                throw fail(L.localized("source \"%1$s\" %2$s: an offline style can use only this machine's regions", "\(name)", "\(what)"))
            }
            guard url.hasPrefix(localScheme), url.hasSuffix(".json") else {
                throw fail(L.localized("source \"%1$s\" is not one of this machine's regions (its url is %2$s)", "\(name)", "\(describe(source["url"]))"))
            }
            let region = String(url.dropFirst(localScheme.count).dropLast(".json".count))
            guard regions.contains(region) else {
                let declared = regions.isEmpty ? "none" : regions.joined(separator: ", ")
                throw fail(L.localized("source \"%1$s\" draws region \"%2$s\", which the style does not declare (it declares %3$s): a style draws only the regions it declares", "\(name)", "\(TerminalText.inline(region))", "\(declared)"))
            }
        }
        for key in ["glyphs", "sprite"] {
            if let value = style[key] { guard value.stringValue?.hasPrefix(localScheme) == true else { throw fail(L.localized("\"%1$s\" is not local", "\(key)")) } }
        }
    }

    private static func object(_ data: Data, fail: (String) -> StyleError) throws -> [String: JSONValue] {
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: data)
        } catch {
            throw fail(L.localized("style.json is not valid JSON: %1$s", error.explanation(in: data)))
        }
        guard let style = parsed.objectValue else { throw fail(L.localized("style.json is not a JSON object")) }
        guard let version = style["version"], version.isNumber, !version.isBoolean, version.double == 8 else {
            throw fail(L.localized("\"version\" must be 8 (MapLibre style specification)"))
        }
        guard style["sources"]?.objectValue != nil else { throw fail(L.localized("\"sources\" is missing or not an object")) }
        return style
    }

    private static func describe(_ value: JSONValue?) -> String {
        switch value {
        case nil: L.localized("nothing")
        case .string(let text)?: "\"\(TerminalText.inline(text))\""
        case .array?: L.localized("an array")
        case .object?: L.localized("an object")
        default: L.localized("a number, a boolean or null")
        }
    }
}
