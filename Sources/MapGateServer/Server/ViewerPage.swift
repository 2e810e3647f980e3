import FoundationEssentials
import MapGateBase
import MapGateStorage

/// An HTML page and the Content-Security-Policy it is served with: scripts and styles only
/// from this server, plus the page's own inline `<script>` and `<style>` by their SHA-256 (no
/// `'unsafe-inline'`, no `'unsafe-eval'`); MapLibre's workers from `blob:` URLs.
struct HTMLPage {
    let html: String
    let contentSecurityPolicy: String
}

/// The HTML mapgate serves: the viewer page (Leaflet from Debian's libjs-leaflet, served by
/// mapgate itself so it works offline), the region list, and the "update required" page.
enum ViewerPage {
    /// `text` escaped, in a `<bdi>`: a name in another direction (Arabic, Hebrew, or a U+202E
    /// in a publisher's name: found by an attack) does not reorder the words around it.
    static func isolated(_ text: String) -> String { "<bdi>" + escape(text) + "</bdi>" }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
            .replacing("'", with: "&#39;")
    }

    /// A page: `head` holds only links to this server's files; `style` and `script` are the
    /// page's one inline `<style>` and `<script>`, allowed by the policy through their hashes.
    static func document(title: String, language: PageLanguage = .english, head: String = "", style: String = "", body: String, script: String? = nil) -> HTMLPage {
        let css = "body{font:15px system-ui,sans-serif;margin:0}main{padding:1em 2em}.notice{padding:2em;background:#fdecea;color:#611a15}" + style
        let html = """
            <!DOCTYPE html>
            <html lang="\(language.tag)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title))</title><link rel="icon" href="data:,">
            <style>\(css)</style>
            \(head)</head><body>\(body)\(script.map { "<script>\($0)</script>" } ?? "")</body></html>
            """
        let scriptSource = script.map { " " + hashSource($0) } ?? ""
        let policy = [
            "default-src 'none'", "script-src 'self'\(scriptSource)", "style-src 'self' \(hashSource(css))", "img-src 'self' data: blob:",
            "connect-src 'self'", "worker-src blob:", "child-src blob:", "base-uri 'none'", "form-action 'none'",
        ].joined(separator: "; ")
        return HTMLPage(html: html, contentSecurityPolicy: policy)
    }

    /// `'sha256-…'` of an inline element's text, as CSP Level 2 §4.2.4 compares it.
    static func hashSource(_ text: String) -> String {
        // Cannot fail short of libcrypto running out of memory; an empty hash then matches
        // nothing, and the browser refuses the inline code (safe, if blank).
        let hex = (try? SHA256Hasher.hex(of: Data(text.utf8))) ?? ""
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return "'sha256-\(Data(bytes).base64EncodedString())'"
    }

    static func closed(_ closure: GateWatch.Closure, language: PageLanguage = .english) -> HTMLPage {
        let store = closure.storeURL.map { " <a href=\"\(escape($0))\">" + escape(language.localized("Update from the store")) + "</a>" } ?? ""
        let title = escape(language.localized("Update required"))
        let text = escape(language.localized("Install mapgate %1$s to keep using these maps.", closure.requiredVersion))
        return document(
            title: language.localized("Update required"), language: language,
            body: "<div class=\"notice\" id=\"gate\"><h1>\(title)</h1><p>\(text)\(store)</p></div>")
    }

    static func viewer(region: TileService.Region, hasLeaflet: Bool, leafletPath: String, language: PageLanguage = .english) -> HTMLPage {
        let id = region.record.id
        guard hasLeaflet else {
            return document(
                title: region.name, language: language,
                body: """
                    <main><h1>\(isolated(region.name))</h1><p class="notice" id="no-leaflet">\(html(language.localized("The map viewer needs Leaflet, which is not installed at %1$s. Install it with %2$s (or set %3$s in mapgate's configuration), then reload this page.", leafletPath, "\u{1}sudo apt-get install libjs-leaflet\u{2}", "\u{1}leafletPath\u{2}")))</p>
                    <p>\(escape(language.localized("Tiles are still served:"))) <a href="/\(escape(id)).json">TileJSON</a>.</p></main>
                    """)
        }
        let b = Self.viewBounds(region.bounds)
        let layer = TileJSON.unwrappedBounds(region.bounds)
        let watcher = updateWatcher(language: language)
        var page: [String: JSONValue] = [
            "id": .string(id), "bounds": .array([.array([.double(b[1]), .double(b[0])]), .array([.double(b[3]), .double(b[2])])]),
            "tileBounds": .array([.array([.double(layer[1]), .double(layer[0])]), .array([.double(layer[3]), .double(layer[2])])]),
            "minzoom": .integer(Int64(region.minzoom)), "maxzoom": .integer(Int64(region.maxzoom)),
            "words": .object([
                "zoomIn": .string(language.localized("Zoom in")), "zoomOut": .string(language.localized("Zoom out")),
                "layers": .string(language.localized("layers:")),
            ]),
        ]
        // Vector tiles get the tile grid the region covers (no tiles template).
        if region.record.format != .pbf {
            page["tiles"] = .string("/\(id)/{z}/{x}/{y}.\(TileRequestHandler.extensions(region.record.format)[0])")
            page["tileSize"] = .integer(Int64(region.tileSize))
            page["attribution"] = .string(AttributionHTML.sanitized(region.attribution ?? ""))
        }
        return document(
            title: region.name, language: language,
            head: """
                <link rel="stylesheet" href="/_leaflet/leaflet.css"><script src="/_leaflet/leaflet.js"></script>
                """,
            style: ViewerAssets.rasterViewerStyle + watcher.style,
            body: """
                <div id="map"></div><div id="panel"><b>\(isolated(region.name))</b> \(isolated(region.record.version))<div id="layers"></div></div>
                <div class="notice" id="gate"></div>
                """ + watcher.body,
            script: inlineScript(page: page, watcher: watcher, main: ViewerAssets.rasterViewerScript))
    }

    /// The area a viewer opens on: the region's bounds, those across the antimeridian (west east
    /// of east) with their east edge past 180° (`170,-10,-170,10` is viewed as `170,-10,190,10`),
    /// which Leaflet and MapLibre fit as one area (found by an attack: the raster viewer opened
    /// on the rest of the world, the vector viewer on nothing).
    static func viewBounds(_ bounds: [Double]) -> [Double] {
        guard bounds.count == 4, bounds[0] > bounds[2] else { return bounds }
        return [bounds[0], bounds[1], bounds[2] + 360, bounds[3]]
    }

    /// The viewer of a vector region: MapLibre GL JS renders its tiles with the publisher's style
    /// when one draws it (a menu offers each, and the style mapgate generates), else with the
    /// generated one (`/REGION/style.json`), whose legend has a checkbox per layer; hovering a
    /// feature shows its layer and properties. Glyphs come from this server, so it works offline.
    static func vectorViewer(
        region: TileService.Region, styles: [(id: String, name: String)] = [], hasMapLibre: Bool, maplibrePath: String, hasRTLTextPlugin: Bool = false,
        language: PageLanguage = .english
    ) -> HTMLPage {
        let id = region.record.id
        guard hasMapLibre else {
            return document(
                title: region.name, language: language,
                body: """
                    <main><h1>\(isolated(region.name))</h1><div class="notice" id="no-maplibre"><p>\(html(language.localized(
                        "Vector maps need MapLibre GL JS (5.x), which is not installed: mapgate looked for %1$s and %2$s in %3$s.",
                        "\u{1}maplibre-gl.js\u{2}", "\u{1}maplibre-gl.css\u{2}", maplibrePath + (maplibrePath == MapLibreFiles.localPath ? " & " + MapLibreFiles.packagedPath : ""))))</p>
                    <p>\(html(language.localized(
                        "Copy those two files of a MapLibre GL JS release (its %1$s folder, from %2$s or the npm package %3$s) into that folder, or into another folder named by %4$s in mapgate's configuration, then reload this page.",
                        "\u{1}dist\u{2}", "\u{3}github.com/maplibre/maplibre-gl-js/releases\u{4}", "\u{1}maplibre-gl\u{2}", "\u{1}maplibrePath\u{2}")))</p></div>
                    <p>\(escape(language.localized("Tiles are still served:"))) <a href="/\(escape(id)).json">TileJSON</a>, <a href="/\(escape(id))/style.json">style</a>.</p></main>
                    """)
        }
        let b = Self.viewBounds(region.bounds)
        let edge = TileCoordinate.maximumLatitude
        // Style ids are [a-z0-9._-]: safe in a URL and an attribute; names are escaped.
        let options = styles.map { "<option value=\"/styles/\($0.id)/style.json\" data-style=\"\($0.id)\" dir=\"auto\">\(escape($0.name))</option>" }
            + ["<option value=\"/\(escape(id))/style.json\" data-style=\"inspect\">" + escape(language.localized("All layers (inspect)")) + "</option>"]
        let menu = styles.isEmpty ? "" : "<label>" + escape(language.localized("Style")) + " <select id=\"style\">\(options.joined())</select></label>"
        // The label language of the generated style (issue 37): the page's by default; each other
        // one named in its own language. Publisher styles label as their publisher chose.
        let endonyms = ["local": language.localized("Local names"), "en": "English", "ja": "日本語", "ko": "한국어", "zh-TW": "繁體中文", "zh-CN": "简体中文"]
        let labelOptions = ["<option value=\"\">" + escape(language.localized("This page's language")) + "</option>"]
            + VectorStyle.labelLanguages.map { "<option value=\"\($0)\">\(escape(endonyms[$0] ?? $0))</option>" }
        let labelMenu = "<label>" + escape(language.localized("Labels")) + " <select id=\"labels\">\(labelOptions.joined())</select></label>"
        let watcher = updateWatcher(language: language)
        var page: [String: JSONValue] = [
            "id": .string(id), "bounds": .array([.double(b[0]), .double(max(b[1], -edge)), .double(b[2]), .double(min(b[3], edge))]),
            "minzoom": .integer(Int64(region.minzoom)),
            "words": .object([
                "zoomIn": .string(language.localized("Zoom in")), "zoomOut": .string(language.localized("Zoom out")),
                "toggleAttribution": .string(language.localized("Toggle attribution")),
            ]),
        ]
        // Arabic, Persian and Hebrew labels shaped and ordered by mapgate's plugin (docs/rtl-text.md).
        if hasRTLTextPlugin { page["rtlTextPlugin"] = .string("/_maplibre/\(MapLibreFiles.rtlTextPlugin)") }
        return document(
            title: region.name, language: language,
            head: """
                <link rel="stylesheet" href="/_maplibre/maplibre-gl.css"><script src="/_maplibre/maplibre-gl.js"></script>
                """,
            style: ViewerAssets.vectorViewerStyle + watcher.style,
            body: """
                <div id="map"></div><div id="panel"><b>\(isolated(region.name))</b> \(isolated(region.record.version))\(menu)\(labelMenu)<div id="legend"></div><pre id="info"></pre></div>
                <div class="notice" id="gate"></div>
                """ + watcher.body,
            script: inlineScript(page: page, watcher: watcher, main: ViewerAssets.vectorViewerScript))
    }

    /// A page's one inline script: `const page = …;` (what the page's scripts read, with the
    /// update watcher's words as `page.update`), then the page's own script, then the watcher's.
    static func inlineScript(page: [String: JSONValue], watcher: UpdateWatcher, main: String?) -> String {
        var page = page
        page["update"] = watcher.data
        // (not translated: script)
        return "const page = " + scriptJSON(.object(page)) + ";\n" + (main ?? "") + watcher.script
    }

    /// JSON inside a `<script>` element: `</` written `<\/`, so no value can close the element.
    static func scriptJSON(_ value: JSONValue) -> String {
        let data = (try? value.encoded([.sortedKeys])) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self).replacing("</", with: "<\\/")
    }

    /// A message made HTML: escaped, then its marks made markup: U+0001…U+0002 a `<code>`, and
    /// U+0003…U+0004 a link to the address between them.
    private static func html(_ message: String) -> String {
        var result = escape(message).replacing("\u{1}", with: "<code>").replacing("\u{2}", with: "</code>")
        while let start = result.firstRange(of: "\u{3}"), let end = result[start.upperBound...].firstRange(of: "\u{4}") {
            let address = String(result[start.upperBound..<end.lowerBound])
            result.replaceSubrange(start.lowerBound..<end.upperBound, with: "<a href=\"https://\(address)\">\(address)</a>")
        }
        return result
    }
}
