import Foundation

/// Serves one connection's requests: the region list, TileJSON, XYZ tiles, the viewer page and
/// Leaflet's files. Owns its own read-only SQLite connection per region it has served.
public final class TileRequestHandler: HTTPRequestHandler {
    private let service: TileService
    private var files: [String: MBTilesFile] = [:]

    public init(service: TileService) {
        self.service = service
    }

    private static let common: [(String, String)] = [("Access-Control-Allow-Origin", "*")]

    public func respond(to request: HTTPServerRequest, with writer: HTTPResponseWriter) {
        let head = request.method == "HEAD"
        guard request.method == "GET" || head else {
            return send(writer, 405, text: "method \(request.method) not allowed\n", extra: [("Allow", "GET, HEAD")], head: head)
        }
        let path = request.path
        guard Self.isSafe(path) else {
            return send(writer, 400, text: "bad path\n", head: head)
        }
        if path == "/" { return index(request, writer, head: head) }
        if path.hasPrefix("/_leaflet/") { return leaflet(String(path.dropFirst("/_leaflet/".count)), writer, head: head) }
        if path.hasPrefix("/view/") { return viewer(String(path.dropFirst("/view/".count)), request, writer, head: head) }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 1, parts[0].hasSuffix(".json") {
            return tileJSON(String(parts[0].dropLast(5)), request, writer, head: head)
        }
        if parts.count == 4 { return tile(parts, request, writer, head: head) }
        send(writer, 404, text: "not found: \(path)\n", head: head)
    }

    // MARK: Routes

    private func index(_ request: HTTPServerRequest, _ writer: HTTPResponseWriter, head: Bool) {
        let regions = service.regions.values.sorted { $0.record.id < $1.record.id }
        if request.header("Accept")?.contains("application/json") == true {
            let list: [[String: Any]] = regions.map { region in
                [
                    "id": region.record.id, "name": region.name, "version": region.record.version, "format": region.record.format.rawValue,
                    "tilejson": baseURL(request) + "/\(region.record.id).json", "viewer": baseURL(request) + "/view/\(region.record.id)",
                ]
            }
            return send(writer, 200, json: ["regions": list], head: head)
        }
        let items = regions.map { region in
            let id = ViewerPage.escape(region.record.id)
            return "<li><a href=\"/view/\(id)\">\(ViewerPage.escape(region.name))</a> \(ViewerPage.escape(region.record.version)), \(region.record.format.rawValue) · <a href=\"/\(id).json\">TileJSON</a></li>"
        }.joined(separator: "\n")
        let body = ViewerPage.document(title: "mapgate", body: "<h1>mapgate regions</h1><ul>\n\(items.isEmpty ? "<li>No region is installed.</li>" : items)\n</ul>")
        send(writer, 200, html: body, head: head)
    }

    private func tileJSON(_ id: String, _ request: HTTPServerRequest, _ writer: HTTPResponseWriter, head: Bool) {
        if refuseWhenClosed(json: true, writer, head: head) { return }
        guard let region = service.regions[id] else { return send(writer, 404, text: "region \(id) is not installed\n", head: head) }
        let base = baseURL(request)
        var object: [String: Any] = [
            "tilejson": "3.0.0",
            "tiles": ["\(base)/\(id)/{z}/{x}/{y}.\(Self.extensions(region.record.format)[0])"],
            "name": region.name, "version": region.record.version, "scheme": "xyz",
            "bounds": region.bounds, "center": region.center, "minzoom": region.minzoom, "maxzoom": region.maxzoom,
            "format": region.record.format.rawValue,
        ]
        if let attribution = region.attribution { object["attribution"] = attribution }
        if let description = region.description { object["description"] = description }
        if region.record.format == .pbf {
            let layers = region.vectorLayersJSON.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
            object["vector_layers"] = layers ?? []
        }
        send(writer, 200, json: object, head: head)
    }

    private func tile(_ parts: [String], _ request: HTTPServerRequest, _ writer: HTTPResponseWriter, head: Bool) {
        let id = parts[0]
        if refuseWhenClosed(json: true, writer, head: head) { return }
        guard let region = service.regions[id] else { return send(writer, 404, text: "region \(id) is not installed\n", head: head) }
        let last = parts[3].split(separator: ".", omittingEmptySubsequences: false)
        guard last.count == 2, let z = Self.number(parts[1]), let x = Self.number(parts[2]), let y = Self.number(String(last[0])),
            z <= 30, x < 1 << z, y < 1 << z
        else {
            return send(writer, 400, text: "malformed tile coordinates: \(parts[1...].joined(separator: "/"))\n", head: head)
        }
        guard Self.extensions(region.record.format).contains(String(last[1])) else {
            return send(writer, 400, text: "region \(id) has \(region.record.format.rawValue) tiles, not .\(last[1])\n", head: head)
        }
        let data: Data?
        do {
            data = try file(for: region).tile(z: z, x: x, y: y)
        } catch {
            return send(writer, 500, text: "cannot read region \(id): \(error.localizedDescription)\n", head: head)
        }
        guard var body = data else { return send(writer, 404, text: "no tile at \(z)/\(x)/\(y)\n", head: head) }
        var headers: [(String, String)] = [("Content-Type", region.record.format.contentType), ("Cache-Control", "no-cache")]
        var etag = "\"\(region.etagPrefix)-\(z)-\(x)-\(y)"
        if region.record.format == .pbf, GzipInflater.isGzip(body) {
            if Self.acceptsGzip(request) {
                headers.append(("Content-Encoding", "gzip"))
                etag += "-gz"
            } else if let plain = try? GzipInflater.decompress(body) {
                body = plain
            }
        }
        etag += "\""
        headers.append(("ETag", etag))
        headers.append(("Vary", "Accept-Encoding"))
        if let match = request.header("If-None-Match"), match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" }) {
            writer.respond(status: 304, headers: Self.common + headers.filter { $0.0 != "Content-Type" })
            return
        }
        writer.respond(status: 200, headers: Self.common + headers, body: body, sendBody: !head)
    }

    private func viewer(_ id: String, _ request: HTTPServerRequest, _ writer: HTTPResponseWriter, head: Bool) {
        if refuseWhenClosed(json: false, writer, head: head) { return }
        guard let region = service.regions[id] else {
            let names = service.regions.keys.sorted().joined(separator: ", ")
            return send(writer, 404, html: ViewerPage.document(title: "not installed", body: "<p>Region \(ViewerPage.escape(id)) is not installed. Installed: \(ViewerPage.escape(names)).</p>"), head: head)
        }
        let hasLeaflet = FileManager.default.fileExists(atPath: service.leafletPath + "/leaflet.js")
        send(writer, 200, html: ViewerPage.viewer(region: region, hasLeaflet: hasLeaflet, leafletPath: service.leafletPath), head: head)
    }

    private func leaflet(_ name: String, _ writer: HTTPResponseWriter, head: Bool) {
        guard let data = LeafletFiles.contents(of: name, in: service.leafletPath) else {
            return send(writer, 404, text: "not found\n", head: head)
        }
        let type = name.hasSuffix(".js") ? "text/javascript" : name.hasSuffix(".css") ? "text/css" : name.hasSuffix(".png") ? "image/png" : "application/octet-stream"
        writer.respond(status: 200, headers: Self.common + [("Content-Type", type), ("Cache-Control", "max-age=86400")], body: data, sendBody: !head)
    }

    // MARK: Helpers

    /// The 403 answer while the gate is closed, naming the required version and the store URL;
    /// 503 while the server cannot read or write the gate's state (it fails closed).
    private func refuseWhenClosed(json: Bool, _ writer: HTTPResponseWriter, head: Bool) -> Bool {
        if let failure = service.gate.failure {
            let message = "the update gate cannot be checked (\(failure)); tiles are withheld until it can"
            if json {
                send(writer, 503, json: ["error": "gate-unavailable", "message": message], extra: [("Retry-After", "5")], head: head)
            } else {
                send(writer, 503, html: ViewerPage.document(title: "gate unavailable", body: "<p>\(ViewerPage.escape(message))</p>"), extra: [("Retry-After", "5")], head: head)
            }
            return true
        }
        guard let closed = service.gate.closed else { return false }
        let message = "update required: install mapgate \(closed.requiredVersion) to keep using these maps"
        if json {
            send(writer, 403, json: ["error": "update-required", "message": message, "requiredVersion": closed.requiredVersion, "storeURL": closed.storeURL ?? NSNull()], head: head)
        } else {
            send(writer, 403, html: ViewerPage.closed(closed), head: head)
        }
        return true
    }

    private func file(for region: TileService.Region) throws -> MBTilesFile {
        if let file = files[region.record.id] { return file }
        // Installed files are replaced by rename, never written in place: no locking needed.
        let file = try MBTilesFile(path: region.path, immutable: true)
        files[region.record.id] = file
        return file
    }

    /// `http://host:port` as the client reached us (from `Host`), else the bound address.
    private func baseURL(_ request: HTTPServerRequest) -> String {
        if let host = request.header("Host"), !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) }) {
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

    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 10, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func acceptsGzip(_ request: HTTPServerRequest) -> Bool {
        guard let accept = request.header("Accept-Encoding")?.lowercased() else { return false }
        return accept.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            return (parts.first == "gzip" || parts.first == "*") && !parts.dropFirst().contains("q=0")
        }
    }

    private func send(_ writer: HTTPResponseWriter, _ status: Int, text: String, extra: [(String, String)] = [], head: Bool) {
        writer.respond(status: status, headers: Self.common + extra + [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8), sendBody: !head)
    }

    private func send(_ writer: HTTPResponseWriter, _ status: Int, json: [String: Any], extra: [(String, String)] = [], head: Bool) {
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        writer.respond(status: status, headers: Self.common + extra + [("Content-Type", "application/json")], body: data, sendBody: !head)
    }

    private func send(_ writer: HTTPResponseWriter, _ status: Int, html: String, extra: [(String, String)] = [], head: Bool) {
        let headers = Self.common + extra + [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")]
        writer.respond(status: status, headers: headers, body: Data(html.utf8), sendBody: !head)
    }
}
