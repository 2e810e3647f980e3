import FoundationEssentials

/// Serves one request at a time: the region list, TileJSON, XYZ tiles, the viewer pages,
/// Leaflet's and MapLibre's files, styles (generated and the publisher's, with sprites), fonts
/// and glyphs, `/health`, `/metrics`, and the shared mirror (``MirrorShare``) when there is one. Owns a read-only SQLite connection per region it
/// has served, reopened when the region's file changed. Knows nothing of sockets.
///
/// CORS: tiles, TileJSON and Leaflet's files are public map data, read with GET and no
/// credentials, so they carry `Access-Control-Allow-Origin: *` (and OPTIONS preflights for them
/// are granted). The region list, the viewer, `/health` and `/metrics` carry none: another web
/// page cannot read them.
public final class TileRequestHandler: HTTPRequestHandler {
    private let service: TileService
    private var files: [String: (identity: FileIdentity, file: MBTilesFile)] = [:]

    public init(service: TileService) {
        self.service = service
    }

    private static let anyOrigin: [(name: String, value: String)] = [("Access-Control-Allow-Origin", "*")]
    /// The most a gzipped vector tile is unpacked to for a client that does not take gzip (real
    /// tiles are well under a megabyte; a few kilobytes of deflate can unpack to gigabytes).
    public static let maximumUnpackedTileSize = 16 << 20

    /// The route a request target belongs to, for metrics.
    public static func route(of target: String) -> String { Route(target: target).name }

    public func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let path = request.path
        guard Self.isSafe(path) else { return text(400, "bad path\n") }
        let route = Route(path: path)
        var response = answer(request, route: route)
        response.label = route.name
        return response
    }

    /// The answer of `route`.
    private func answer(_ request: HTTPServerRequest, route: Route) -> HTTPServerResponse {
        let path = request.path
        if request.method == "OPTIONS" { return preflight(request, isPublic: route.isPublic) }
        guard request.method == "GET" || request.method == "HEAD" else {
            return text(405, "method \(request.method) not allowed\n", extra: [("Allow", "GET, HEAD, OPTIONS")])
        }
        switch route {
        case .index: return index(request)
        case .health: return health()
        case .metrics:
            return HTTPServerResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Data(service.metrics.render(gate: service.gate).utf8))
        case .leaflet(let name): return leaflet(name)
        case .maplibre(let name): return maplibre(name)
        case .viewer(let id): return viewer(id)
        case .fontList: return fontList()
        case .glyphs(let fontstack, let file): return glyphs(fontstack: fontstack, file: file)
        case .styleList: return styleList(request)
        case .publishedStyle(let id, let file): return publishedStyle(id, file: file, request)
        case .style(let id): return style(id, request)
        case .tileJSON(let id): return tileJSON(id, request)
        case .tile(let parts): return tile(parts, request)
        case .mirror(let name):
            guard let share = service.share else { return text(404, "not found: \(path) (this server shares no mirror)\n") }
            return share.respond(name, request)
        case .other: return text(404, "not found: \(path)\n")
        }
    }

    /// A CORS preflight: 204, granting GET and HEAD (and the headers asked for) on public routes.
    private func preflight(_ request: HTTPServerRequest, isPublic: Bool) -> HTTPServerResponse {
        var headers: [(name: String, value: String)] = [("Allow", "GET, HEAD, OPTIONS")]
        if isPublic {
            headers += Self.anyOrigin + [("Access-Control-Allow-Methods", "GET, HEAD"), ("Access-Control-Max-Age", "600")]
            if let asked = request.header("Access-Control-Request-Headers"), asked.count <= 1024,
                asked.utf8.allSatisfy({ $0 == 0x2C || $0 == 0x20 || $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
            {
                headers.append(("Access-Control-Allow-Headers", asked))
            }
        }
        return HTTPServerResponse(status: 204, headers: headers)
    }

    /// 200 with the gate's state once the regions are open; 503 while the gate refuses.
    private func health() -> HTTPServerResponse {
        let snapshot = service.gate.snapshot
        let state = snapshot.standing.name
        let damaged = service.damaged
        var object: [String: Any] = ["status": state != "open" ? "refusing" : damaged.isEmpty ? "ok" : "degraded", "gate": state, "regions": service.regions.count]
        // Installed regions that cannot be served, with the reason: never counted as served.
        if !damaged.isEmpty { object["damaged"] = damaged.keys.sorted().map { ["id": $0, "reason": damaged[$0] ?? ""] } }
        if let left = snapshot.usesLeft { object["usesLeft"] = left }
        switch snapshot.standing {
        case .open: break
        case .failing(let failure): object["message"] = failure
        case .closed(let closed): object["requiredVersion"] = closed.requiredVersion
        }
        var response = json(state == "open" ? 200 : 503, object, cors: false)
        response.headers.append(("Cache-Control", "no-store"))
        if state != "open" { response.headers.append(("Retry-After", "5")) }
        return response
    }

    // MARK: Routes

    private func index(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let regions = service.regions.values.sorted { $0.record.id < $1.record.id }
        if request.header("Accept")?.contains("application/json") == true {
            let list: [[String: Any]] = regions.map { region in
                [
                    "id": region.record.id, "name": region.name, "version": region.record.version, "format": region.record.format.rawValue,
                    "tilejson": baseURL(request) + "/\(region.record.id).json", "viewer": baseURL(request) + "/view/\(region.record.id)",
                ]
            }
            // The publisher's styles all of whose regions are served, each with the viewer of its first region.
            let styles: [[String: Any]] = service.drawableStyles.map { style in
                [
                    "id": style.bundle.id, "name": style.bundle.name, "regions": style.bundle.regions,
                    "url": baseURL(request) + "/styles/\(style.bundle.id)/style.json",
                    "viewer": baseURL(request) + "/view/\(style.bundle.regions[0])#style=\(style.bundle.id)",
                ]
            }
            return json(200, ["regions": list, "styles": styles], cors: false)
        }
        let items = regions.map { region in
            let id = ViewerPage.escape(region.record.id)
            return "<li><a href=\"/view/\(id)\">\(ViewerPage.escape(region.name))</a> \(ViewerPage.escape(region.record.version)), \(region.record.format.rawValue) · <a href=\"/\(id).json\">TileJSON</a></li>"
        }.joined(separator: "\n")
        // Style ids are [a-z0-9._-]: safe in a URL; names are escaped.
        let styleItems = service.drawableStyles.map { style in
            let id = style.bundle.id
            return "<li><a href=\"/view/\(style.bundle.regions[0])#style=\(id)\">\(ViewerPage.escape(style.bundle.name))</a> (draws \(ViewerPage.escape(style.bundle.regions.joined(separator: ", ")))) · <a href=\"/styles/\(id)/style.json\">style.json</a></li>"
        }.joined(separator: "\n")
        let stylesSection = styleItems.isEmpty ? "" : "<h2>Styles</h2><ul id=\"styles\">\n\(styleItems)\n</ul>"
        let body = ViewerPage.document(
            title: "mapgate", body: "<h1>mapgate regions</h1><ul>\n\(items.isEmpty ? "<li>No region is installed.</li>" : items)\n</ul>\(stylesSection)")
        return html(200, body)
    }

    /// The answer for a region that is not served: 404 when it is not installed; 500 with the
    /// reason when it is but its file is missing, cut short or unreadable (never a quiet 404).
    private func notServed(_ id: String) -> HTTPServerResponse {
        guard let reason = service.damaged[id] else { return text(404, "region \(id) is not installed\n", cors: true) }
        return text(500, "region \(id) is installed but damaged: \(reason); mapgate sync \(id) installs it again\n", cors: true)
    }

    private func tileJSON(_ id: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        let layers = region.record.format == .pbf ? region.vectorLayersJSON.flatMap { try? JSONValue(parsing: Data($0.utf8)) }?.arrayValue ?? [] : nil
        let tileJSON = TileJSON(
            tiles: ["\(baseURL(request))/\(id)/{z}/{x}/{y}.\(Self.extensions(region.record.format)[0])"], name: region.name,
            version: region.record.version, bounds: region.bounds, center: region.center, minzoom: region.minzoom, maxzoom: region.maxzoom,
            format: region.record.format.rawValue, attribution: region.attribution.map(AttributionHTML.sanitized),
            description: region.description, vectorLayers: layers)
        guard let body = try? tileJSON.encoded() else { return text(500, "cannot write the TileJSON of region \(id)\n", cors: true) }
        return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", "application/json")], body: body)
    }

    private func tile(_ parts: [String], _ request: HTTPServerRequest) -> HTTPServerResponse {
        let id = parts[0]
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        let last = parts[3].split(separator: ".", omittingEmptySubsequences: false)
        guard last.count == 2, let coordinate = TileCoordinate(z: parts[1], x: parts[2], y: String(last[0])) else {
            return text(400, "malformed tile coordinates: \(parts[1...].joined(separator: "/"))\n", cors: true)
        }
        let (z, x, y) = (coordinate.z, coordinate.x, coordinate.y)
        guard Self.extensions(region.record.format).contains(String(last[1])) else {
            return text(400, "region \(id) has \(region.record.format.rawValue) tiles, not .\(last[1])\n", cors: true)
        }
        // Whether the answer sends stored gzip bytes as they are depends on the client only for
        // vector tiles; the kept answer is looked up for this file (an update is another file).
        let acceptsGzip = region.record.format == .pbf && Self.acceptsGzip(request.header("Accept-Encoding"))
        let key = TileResponseCache.Key(region: id, z: z, x: x, y: y, isGzip: acceptsGzip)
        if let kept = service.tileCache.entry(key, file: region.file) {
            return answer(kept.response, etag: kept.etag, request)
        }
        let stored: MBTilesFile.StoredTile
        do {
            stored = try file(for: region).storedTile(z: z, x: x, y: y)
        } catch {
            files[region.record.id] = nil
            return text(500, "cannot read region \(id): \(errorMessage(error))\n", cors: true)
        }
        var body: Data
        switch stored {
        case .absent: return text(404, "no tile at \(z)/\(x)/\(y)\n", cors: true)
        case .null: return text(404, "tile \(z)/\(x)/\(y) of region \(id) has no data (its tile_data is NULL)\n", cors: true)
        case .data(let data) where data.isEmpty:
            // An empty vector tile is a tile without features (204, as martin answers); an
            // empty image is no image.
            guard region.record.format == .pbf else { return text(404, "tile \(z)/\(x)/\(y) of region \(id) is empty\n", cors: true) }
            return HTTPServerResponse(status: 204, headers: Self.anyOrigin + [("Cache-Control", "no-cache")])
        case .data(let data): body = data
        }
        var headers: [(name: String, value: String)] = [("Content-Type", region.record.format.contentType), ("Cache-Control", "no-cache")]
        var etag = "\"\(region.etagPrefix)-\(z)-\(x)-\(y)"
        if region.record.format == .pbf, GzipInflater.isGzip(body) {
            if acceptsGzip {
                headers.append(("Content-Encoding", "gzip"))
                etag += "-gz"
            } else {
                do {
                    body = try GzipInflater.decompress(body, maximumSize: Self.maximumUnpackedTileSize)
                } catch {
                    return text(500, "cannot unpack tile \(z)/\(x)/\(y) of region \(id): \(errorMessage(error))\n", cors: true)
                }
            }
        }
        etag += "\""
        headers.append(("ETag", etag))
        headers.append(("Vary", "Accept-Encoding"))
        // Made once, kept, and sent as it is to every client that asks for it while it is kept.
        let prepared = HTTPPreparedResponse(status: 200, headers: Self.anyOrigin + headers, body: HTTPBodyBytes(body))
        service.tileCache.insert(key, file: region.file, etag: etag, response: prepared)
        return answer(prepared, etag: etag, request)
    }

    /// A tile's 200, or 304 when `If-None-Match` names its ETag.
    private func answer(_ prepared: HTTPPreparedResponse, etag: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let match = request.header("If-None-Match"), Self.matches(ifNoneMatch: match, etag: etag) {
            // The 200's headers but its Content-Type, and the length of the tile it stands for,
            // as RFC 9110 §8.6 allows (never a 0).
            let length = ("Content-Length", String(prepared.body.count))
            return HTTPServerResponse(status: 304, headers: prepared.headers.filter { $0.name != "Content-Type" } + [length])
        }
        return HTTPServerResponse(prepared: prepared)
    }

    private func viewer(_ id: String) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: false) { return refusal }
        guard let region = service.region(id) else {
            if let reason = service.damaged[id] {
                return html(500, ViewerPage.document(title: "damaged", body: "<p>Region \(ViewerPage.escape(id)) is installed but damaged: \(ViewerPage.escape(reason)). <code>mapgate sync \(ViewerPage.escape(id))</code> installs it again.</p>"))
            }
            let names = service.regions.keys.sorted().joined(separator: ", ")
            return html(404, ViewerPage.document(title: "not installed", body: "<p>Region \(ViewerPage.escape(id)) is not installed. Installed: \(ViewerPage.escape(names)).</p>"))
        }
        if region.record.format == .pbf {
            let hasMapLibre = FileManager.default.fileExists(atPath: service.maplibrePath + "/maplibre-gl.js")
            let styles = service.styles(drawing: id).map { (id: $0.bundle.id, name: $0.bundle.name) }
            return html(200, ViewerPage.vectorViewer(region: region, styles: styles, hasMapLibre: hasMapLibre, maplibrePath: service.maplibrePath))
        }
        let hasLeaflet = FileManager.default.fileExists(atPath: service.leafletPath + "/leaflet.js")
        return html(200, ViewerPage.viewer(region: region, hasLeaflet: hasLeaflet, leafletPath: service.leafletPath))
    }

    /// A MapLibre style for the region: made from `vector_layers` for a vector region, a raster
    /// source for the others; its source points at the region's TileJSON on the request's Host.
    private func style(_ id: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        let base = baseURL(request)
        let style: [String: Any]
        if region.record.format == .pbf {
            style = VectorStyle.style(
                regionID: id, name: region.name, layers: VectorStyle.layers(fromMetadataJSON: region.metadataJSON), tileJSONURL: base + "/\(id).json",
                glyphsURL: base + "/fonts/{fontstack}/{range}.pbf", fonts: VectorStyle.labelFonts(among: service.glyphs.library.names))
        } else {
            style = [
                "version": 8, "name": region.name,
                "sources": [id: ["type": "raster", "url": base + "/\(id).json", "tileSize": 256]],
                "layers": [["id": id, "type": "raster", "source": id]],
            ]
        }
        return json(200, style, cors: true)
    }

    /// The publisher's installed styles: id, name, version, the regions each draws, its URL.
    private func styleList(_ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        let base = baseURL(request)
        // Only the styles all of whose regions are served: one drawing a removed region would 404.
        let list: [[String: Any]] = service.drawableStyles.map { style in
            [
                "id": style.bundle.id, "name": style.bundle.name, "version": style.bundle.version, "regions": style.bundle.regions,
                "url": base + "/styles/\(style.bundle.id)/style.json",
            ]
        }
        return json(200, ["styles": list], cors: true)
    }

    /// A publisher's style (its `local://` URLs made absolute on the request's Host) or one of
    /// its sprite files.
    private func publishedStyle(_ id: String, file: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
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

    /// The names of the fonts glyphs can be made from, as a JSON array.
    private func fontList() -> HTTPServerResponse {
        do {
            let body = try JSONValue.encode(service.glyphs.library.names)
            return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", "application/json")], body: body)
        } catch {
            return text(500, "cannot write the font list as JSON: \(errorMessage(error))\n", cors: true)
        }
    }

    /// One glyph range (`/fonts/{fontstack}/{start}-{end}.pbf`), MapLibre's glyph protobuf.
    private func glyphs(fontstack: String, file: String) -> HTTPServerResponse {
        guard file.hasSuffix(".pbf") else { return text(404, "not found: /fonts/\(fontstack)/\(file)\n", cors: true) }
        do {
            let answer = try service.glyphs.answer(fontstack: fontstack, range: String(file.dropLast(4)))
            // Which installed fonts drew it: the stack's own, then the fallbacks (docs/serving.md).
            // Font names come from font files: percent-encoded, so no byte of theirs can break the head.
            func header(_ names: [String]) -> String { names.map { $0.percentEncoded(allowing: \.isURLPathAllowed) }.joined(separator: ",") }
            let fonts = [("X-Mapgate-Fonts", header(answer.requested)), ("X-Mapgate-Font-Fallback", header(answer.fallback))].filter { !$0.1.isEmpty }
            return HTTPServerResponse(
                status: 200, headers: Self.anyOrigin + [("Content-Type", "application/x-protobuf"), ("Cache-Control", "max-age=86400")] + fonts,
                body: answer.data)
        } catch let error as GlyphError {
            let status: Int
            switch error {
            case .badRange: status = 400
            case .unknownFont: status = 404
            case .fontUnreadable: status = 500
            }
            return text(status, (error.errorDescription ?? "") + "\n", cors: true)
        } catch let error as SharedLibraryError {
            return text(503, (error.errorDescription ?? "") + "\n", cors: true)
        } catch {
            return text(500, "\(error)\n", cors: true)
        }
    }

    private func maplibre(_ name: String) -> HTTPServerResponse {
        guard let data = MapLibreFiles.contents(of: name, in: service.maplibrePath) else { return text(404, "not found\n", cors: true) }
        let type = name.hasSuffix(".js") ? "text/javascript" : "text/css"
        return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", type), ("Cache-Control", "max-age=86400")], body: data)
    }

    private func leaflet(_ name: String) -> HTTPServerResponse {
        guard let data = LeafletFiles.contents(of: name, in: service.leafletPath) else { return text(404, "not found\n", cors: true) }
        let type = name.hasSuffix(".js") ? "text/javascript" : name.hasSuffix(".css") ? "text/css" : name.hasSuffix(".png") ? "image/png" : "application/octet-stream"
        return HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", type), ("Cache-Control", "max-age=86400")], body: data)
    }

    // MARK: Helpers

    /// The 403 answer while the gate is closed, naming the required version and the store URL;
    /// 503 while the server cannot read or write the gate's state (it fails closed).
    private func refusalWhileClosed(json isJSON: Bool) -> HTTPServerResponse? {
        // One look at the gate per request: one lock, one clock reading, one consistent answer.
        switch service.gate.snapshot.standing {
        case .open:
            return nil
        case .failing(let failure):
            let message = "the update gate cannot be checked (\(failure)); tiles are withheld until it can"
            var response =
                isJSON
                ? json(503, ["error": "gate-unavailable", "message": message], cors: true)
                : html(503, ViewerPage.document(title: "gate unavailable", body: "<p>\(ViewerPage.escape(message))</p>"))
            response.headers.append(("Retry-After", "5"))
            return response
        case .closed(let closed):
            let message = "update required: install mapgate \(closed.requiredVersion) to keep using these maps"
            if isJSON {
                return json(403, ["error": "update-required", "message": message, "requiredVersion": closed.requiredVersion, "storeURL": closed.storeURL ?? JSONValue.null], cors: true)
            }
            return html(403, ViewerPage.closed(closed))
        }
    }

    /// The region's open file; reopened when the installed file is another one (an update
    /// renames a new file over it: the old connection would keep reading the old file).
    private func file(for region: TileService.Region) throws -> MBTilesFile {
        if let open = files[region.record.id], open.identity == region.file { return open.file }
        files[region.record.id] = nil
        // Installed files are replaced by rename, never written in place: no locking needed.
        let file = try MBTilesFile(path: region.path, immutable: true)
        files[region.record.id] = (region.file, file)
        return file
    }

    /// `http://host:port` as the client reached us (from `Host`, which the HTTP layer checked
    /// against the allow-list), else the bound address.
    private func baseURL(_ request: HTTPServerRequest) -> String {
        if let host = request.header("Host"), !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) {
            return "http://\(host)"
        }
        return service.fallbackHost
    }

    /// No `..`, `//`, backslash or NUL anywhere in the (decoded) path.
    static func isSafe(_ path: String) -> Bool {
        var previous: UInt8 = 0
        for byte in path.utf8 {
            if byte == 0x5C || byte == 0 { return false }
            if byte == previous, byte == 0x2E || byte == 0x2F { return false }
            previous = byte
        }
        return true
    }

    static func extensions(_ format: TileFormat) -> [String] {
        switch format {
        case .png: ["png"]
        case .jpg: ["jpg", "jpeg"]
        case .webp: ["webp"]
        case .pbf: ["pbf", "mvt"]
        }
    }

    /// RFC 9110 §12.5.3: gzip is acceptable when its own q-value (else that of `*`) is above 0.
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var gzip: Double?
        var any: Double?
        for item in header.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingWhitespace() }
            guard let coding = parts.first else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                quality = Double(parameter.dropFirst(2)) ?? 0
            }
            if coding == "gzip" || coding == "x-gzip" { gzip = max(gzip ?? 0, quality) }
            if coding == "*" { any = quality }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// RFC 9110 §13.1.2: `If-None-Match` compares entity tags weakly (`W/"a"` matches `"a"`),
    /// takes a list, and `*` matches any.
    public static func matches(ifNoneMatch header: String, etag: String) -> Bool {
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { item in
            let tag = item.trimmingWhitespace()
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == opaque
        }
    }

    private func text(_ status: Int, _ text: String, extra: [(name: String, value: String)] = [], cors: Bool = false) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: (cors ? Self.anyOrigin : []) + extra + [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }

    /// A JSON answer; one that cannot be encoded is a 500 that says so, never a 200 with no body.
    private func json(_ status: Int, _ object: [String: Any], cors: Bool) -> HTTPServerResponse {
        do {
            let data = try JSONValue.encode(object, [.sortedKeys, .withoutEscapingSlashes])
            return HTTPServerResponse(status: status, headers: (cors ? Self.anyOrigin : []) + [("Content-Type", "application/json")], body: data)
        } catch {
            return text(500, "cannot write this answer as JSON: \(errorMessage(error))\n", cors: cors)
        }
    }

    private func html(_ status: Int, _ page: HTMLPage) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status,
            headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"), ("Content-Security-Policy", page.contentSecurityPolicy)],
            body: Data(page.html.utf8))
    }
}
