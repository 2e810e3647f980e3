import FoundationEssentials

/// The pages people open: the region list, the viewers, and Leaflet's and MapLibre's files.
extension TileRequestHandler {
    /// Whether `Accept` asks for the JSON list rather than the page (RFC 9110 §12.5.1): each of
    /// `application/json` and `text/html` takes the quality of the most specific range that
    /// matches it (the type itself, then `application/*` or `text/*`, then `*/*`; media types
    /// without regard to case). JSON when its quality is above 0 and above the page's, or equal
    /// to it and asked for by a range at least as specific that is not `*/*` (which, alone, is
    /// the page: curl's default). Found by attacks: `application/json;q=0, text/html` got JSON,
    /// `APPLICATION/JSON` the page, `application/*` the page and `application/json;q=0.9,
    /// */*;q=1` JSON.
    static func prefersJSON(_ accept: String?) -> Bool {
        guard let accept else { return false }
        // (quality, specificity: 2 the type, 1 its `type/*`, 0 `*/*`) of the most specific match.
        var json: (quality: Double, specificity: Int)?
        var html: (quality: Double, specificity: Int)?
        func note(_ match: inout (quality: Double, specificity: Int)?, _ quality: Double, _ specificity: Int) {
            if let found = match, found.specificity > specificity { return }
            if let found = match, found.specificity == specificity {
                match = (max(found.quality, quality), specificity)
            } else {
                match = (quality, specificity)
            }
        }
        for item in accept.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingWhitespace() }
            guard let type = parts.first else { continue }
            var quality = 1.0
            // A qvalue as RFC 9110 §12.4.2 writes it (`0.5`, not `0x1p-1` or `5e-1`); anything
            // else is no quality (found by an attack: hex and exponents were read as numbers).
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                let text = parameter.dropFirst(2)
                quality = text.wholeMatch(of: /0(\.[0-9]{0,3})?|1(\.0{0,3})?/) != nil ? Double(text) ?? 0 : 0
            }
            switch type {
            case "application/json": note(&json, quality, 2)
            case "application/*": note(&json, quality, 1)
            case "text/html": note(&html, quality, 2)
            case "text/*": note(&html, quality, 1)
            case "*/*":
                note(&json, quality, 0)
                note(&html, quality, 0)
            default: break
            }
        }
        guard let json, json.quality > 0 else { return false }
        guard let html else { return true }
        if json.quality != html.quality { return json.quality > html.quality }
        return json.specificity > 0 && json.specificity >= html.specificity
    }

    func index(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let regions = service.regions.values.sorted { $0.record.id < $1.record.id }
        if Self.prefersJSON(request.header("Accept")) {
            let base = baseURL(request)
            let list = regions.map { region in
                ServerDocument.Index.Region(
                    id: region.record.id, name: region.name, version: region.record.version, format: region.record.format.rawValue,
                    tilejson: base + "/\(region.record.id).json", viewer: base + "/view/\(region.record.id)")
            }
            // The publisher's styles all of whose regions are served, each with the viewer of its first region.
            let styles = service.drawableStyles.map { style in
                ServerDocument.Index.Style(
                    id: style.bundle.id, name: style.bundle.name, regions: style.bundle.regions, url: base + "/styles/\(style.bundle.id)/style.json",
                    viewer: base + "/view/\(style.bundle.regions[0])#style=\(style.bundle.id)")
            }
            var answer = json(200, document: ServerDocument.Index(regions: list, styles: styles), cors: false)
            answer.headers.append(("Vary", "Accept"))
            return answer
        }
        let language = PageLanguage.negotiate(request.header("Accept-Language"))
        let items = regions.map { region in
            let id = ViewerPage.escape(region.record.id)
            // (not translated: markup; the words in it are the page language's)
            return "<li><a href=\"/view/\(id)\">\(ViewerPage.isolated(region.name))</a> \(ViewerPage.isolated(region.record.version)), \(region.record.format.rawValue) · <a href=\"/\(id).json\">TileJSON</a></li>"
        }.joined(separator: "\n")
        // Style ids are [a-z0-9._-]: safe in a URL; names are escaped.
        let styleItems = service.drawableStyles.map { style in
            let id = style.bundle.id
            // (not translated: markup; the words in it are the page language's)
            return "<li><a href=\"/view/\(style.bundle.regions[0])#style=\(id)\">\(ViewerPage.isolated(style.bundle.name))</a> (\(ViewerPage.escape(language.localized("draws %1$s", style.bundle.regions.joined(separator: ", "))))) · <a href=\"/styles/\(id)/style.json\">style.json</a></li>"
        }.joined(separator: "\n")
        let stylesSection = styleItems.isEmpty ? "" : "<h2>\(ViewerPage.escape(language.localized("Styles")))</h2><ul id=\"styles\">\n\(styleItems)\n</ul>"
        // While a newer version is known, the list tells it too (ViewerPage.updateWatcher).
        let watcher = ViewerPage.updateWatcher(language: language)
        let body = ViewerPage.document(
            title: "mapgate", language: language, style: "#gate{position:fixed;z-index:2000;inset:0;display:none}" + watcher.style,
            body: "<main><h1>\(ViewerPage.escape(language.localized("mapgate regions")))</h1><ul>\n\(items.isEmpty ? "<li>" + ViewerPage.escape(language.localized("No region is installed.")) + "</li>" : items)\n</ul>\(stylesSection)</main><div class=\"notice\" id=\"gate\"></div>" + watcher.body,
            script: ViewerPage.inlineScript(page: [:], watcher: watcher, main: nil))
        // The list is also JSON by Accept: a cache keeps both.
        var page = html(200, body)
        if let vary = page.headers.firstIndex(where: { $0.name == "Vary" }) { page.headers[vary].value += ", Accept" }
        return page
    }

    func viewer(_ id: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        let language = PageLanguage.negotiate(request.header("Accept-Language"))
        if let refusal = refusalWhileClosed(json: false, language: language) { return refusal }
        guard let region = service.region(id) else {
            if let reason = service.damaged[id] {
                let text = language.localized("Region %1$s is installed but damaged: %2$s. %3$s installs it again.", id, reason, "mapgate sync " + id)
                return html(500, ViewerPage.document(title: language.localized("damaged"), language: language, body: "<p>\(ViewerPage.escape(text))</p>"))
            }
            let names = service.regions.keys.sorted().joined(separator: ", ")
            let text = language.localized("Region %1$s is not installed. Installed: %2$s.", id, names)
            return html(404, ViewerPage.document(title: language.localized("not installed"), language: language, body: "<p>\(ViewerPage.escape(text))</p>"))
        }
        if region.record.format == .pbf {
            let hasMapLibre = FileManager.default.fileExists(atPath: service.maplibrePath + "/maplibre-gl.js")
            let styles = service.styles(drawing: id).map { (id: $0.bundle.id, name: $0.bundle.name) }
            return html(200, ViewerPage.vectorViewer(
                    region: region, styles: styles, hasMapLibre: hasMapLibre, maplibrePath: service.maplibrePath,
                    hasRTLTextPlugin: MapLibreFiles.hasRTLTextPlugin(in: service.maplibrePath), language: language))
        }
        let hasLeaflet = FileManager.default.fileExists(atPath: service.leafletPath + "/leaflet.js")
        return html(200, ViewerPage.viewer(region: region, hasLeaflet: hasLeaflet, leafletPath: service.leafletPath, language: language))
    }

    func maplibre(_ name: String) -> HTTPServerResponse {
        guard let data = MapLibreFiles.contents(of: name, in: service.maplibrePath) else { return text(404, "not found\n", cors: true) }
        let type = name.hasSuffix(".js") ? "text/javascript" : "text/css"
        return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", type), ("Cache-Control", "max-age=86400")], body: data)
    }

    func leaflet(_ name: String) -> HTTPServerResponse {
        guard let data = LeafletFiles.contents(of: name, in: service.leafletPath) else { return text(404, "not found\n", cors: true) }
        let type = name.hasSuffix(".js") ? "text/javascript" : name.hasSuffix(".css") ? "text/css" : name.hasSuffix(".png") ? "image/png" : "application/octet-stream"
        return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", type), ("Cache-Control", "max-age=86400")], body: data)
    }
}
