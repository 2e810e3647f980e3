import FoundationEssentials
import MapGateStorage

/// Styles: the one mapgate generates for a region, and the publisher's with their sprites.
extension TileRequestHandler {
    /// A MapLibre style for the region: made from `vector_layers` for a vector region, a raster
    /// source for the others; its source points at the region's TileJSON on the request's Host.
    func style(_ id: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        let base = baseURL(request)
        let tileJSONURL = base + "/\(id).json"
        // Labels in the reader's language where the data has it (`name:ja` before `name`), or in
        // the one the viewer's switch chose (`?labels=ja`); the CJK face of that language first.
        let language = PageLanguage.negotiate(request.header("Accept-Language")).tag
        let chosen = Self.queryValue("labels", in: request.query)
        let fields: [String]
        let labelLanguage: String
        if let chosen {
            guard let named = VectorStyle.nameFields(forLabels: chosen) else {
                return text(400, "labels=\(chosen): not one of \(VectorStyle.labelLanguages.joined(separator: ", "))\n", cors: true)
            }
            (fields, labelLanguage) = (named, chosen == "local" ? language : chosen)
        } else {
            (fields, labelLanguage) = (VectorStyle.nameFields(forLanguage: language), language)
        }
        let style =
            region.record.format == .pbf
            ? VectorStyle.style(
                regionID: id, name: region.name, layers: VectorStyle.layers(fromMetadataJSON: region.metadataJSON), tileJSONURL: tileJSONURL,
                glyphsURL: base + "/fonts/{fontstack}/{range}.pbf", fonts: VectorStyle.labelFonts(among: service.glyphs.library.names, language: labelLanguage),
                nameFields: fields)
            : MapLibreStyle.raster(regionID: id, name: region.name, tileJSONURL: tileJSONURL, tileSize: region.tileSize)
        var response = json(200, document: style, cors: true)
        response.headers.append(("Vary", "Accept-Language"))
        return revalidatable(response, request)
    }

    /// The value of `name` in a query string (`a=1&labels=ja`), as it is (not decoded: the values
    /// asked for are plain tokens); nil when absent.
    static func queryValue(_ name: String, in query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first.map(String.init) == name {
                return parts.count == 2 ? String(parts[1]) : ""
            }
        }
        return nil
    }

    /// The publisher's installed styles: id, name, version, the regions each draws, its URL.
    func styleList(_ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        let base = baseURL(request)
        // Only the styles all of whose regions are served: one drawing a removed region would 404.
        let list = service.drawableStyles.map { style in
            ServerDocument.StyleList.Style(
                id: style.bundle.id, name: style.bundle.name, version: style.bundle.version, regions: style.bundle.regions,
                url: base + "/styles/\(style.bundle.id)/style.json")
        }
        return json(200, document: ServerDocument.StyleList(styles: list), cors: true)
    }

    /// A publisher's style (its `local://` URLs made absolute on the request's Host) or one of
    /// its sprite files.
    func publishedStyle(_ id: String, file: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let style = service.style(id) else { return text(404, "style \(id) is not installed\n", cors: true) }
        let etag = "\"\(style.bundle.version)\""
        if file == "style.json" {
            // Its body depends on the Host it was asked at: no tag.
            let body = style.bundle.style(baseURL: baseURL(request))
            return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", "application/json"), ("Cache-Control", "no-cache")], body: body)
        }
        guard let sprite = style.sprites[file] else { return text(404, "style \(id) has no \(file)\n", cors: true) }
        let type = file.hasSuffix(".png") ? "image/png" : "application/json"
        let headers: [(name: String, value: String)] = Self.anyOrigin + [("Content-Type", type), ("Cache-Control", "no-cache"), ("ETag", etag)]
        if let match = request.header("If-None-Match"), Self.matches(ifNoneMatch: match, etag: etag) {
            return HTTPServerResponse(status: 304, headers: headers.filter { $0.name != "Content-Type" } + [("Content-Length", String(sprite.count))])
        }
        return HTTPServerResponse(status: 200, headers: headers, shared: sprite)
    }
}
