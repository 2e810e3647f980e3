import FoundationEssentials
import MapGateBase
import MapGateStorage

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
    let service: TileService
    var files: [String: (identity: FileIdentity, file: MBTilesFile)] = [:]
    /// The service's ``TileService/generation`` when ``files`` was last compared with its regions.
    private var filesGeneration = 0
    /// Hashes tiles for their ETags, kept for this worker's requests: one libcrypto context made
    /// once, not one per tile (docs/benchmarks.md, "The cost of tile ETags").
    private var tileHasher: SHA256Hasher?

    /// The SHA-256 of `tile` (hex), for its ETag; nil when libcrypto fails (the hasher is made
    /// afresh for the next tile).
    func digest(ofTile tile: Data) -> String? {
        do {
            let hasher = try tileHasher ?? SHA256Hasher()
            tileHasher = hasher
            try hasher.update(tile)
            return try hasher.finalizeHex()
        } catch {
            tileHasher = nil
            return nil
        }
    }

    public init(service: TileService) {
        self.service = service
    }

    static let anyOrigin: [(name: String, value: String)] = [("Access-Control-Allow-Origin", "*")]
    /// The most a gzipped vector tile is unpacked to for a client that does not take gzip (real
    /// tiles are well under a megabyte; a few kilobytes of deflate can unpack to gigabytes).
    public static let maximumUnpackedTileSize = TileLimits.maximumUnpackedSize

    /// The route a request target belongs to, for metrics.
    public static func route(of target: String) -> String { Route(target: target).name }

    public func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        closeReplacedFiles()
        // And after: this worker may wait in the pool a long time, holding what it opened.
        defer { closeReplacedFiles() }
        let path = request.path
        if let problem = Self.pathProblem(path) { return text(400, "bad path \(HTTPServerRequest.shown(path)): \(problem)\n") }
        let route = Route(path: path)
        var response = answer(request, route: route)
        if response.label == nil { response.label = route.name }
        return response
    }

    /// The label of a tile's 304 to `If-None-Match: *`: answered, but no tile is shown to be held.
    public static let unheldTileLabel = "tile-unheld"

    /// Closes the files of regions removed or replaced since the last look: a file deleted (by
    /// `remove`, or renamed over by `sync`) keeps its disk space while a connection holds it open.
    func closeReplacedFiles() {
        let generation = service.generation.load(ordering: .acquiring)
        guard generation != filesGeneration, !files.isEmpty else {
            filesGeneration = generation
            return
        }
        filesGeneration = generation
        let regions = service.regions
        files = files.filter { regions[$0.key]?.file == $0.value.identity }
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
        case .viewer(let id): return viewer(id, request)
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
                // A plain list of the names asked for: empty items (`,,,`) and spaces dropped.
                let names = asked.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
                if !names.isEmpty { headers.append(("Access-Control-Allow-Headers", names.joined(separator: ", "))) }
            }
        }
        return HTTPServerResponse(status: 204, headers: headers)
    }

    /// 200 with the gate's state once the regions are open; 503 while the gate refuses.
    private func health() -> HTTPServerResponse {
        let snapshot = service.gate.snapshot
        let state = snapshot.standing.name
        let damaged = service.damaged
        var health = ServerDocument.Health(
            status: state != "open" ? "refusing" : damaged.isEmpty ? "ok" : "degraded", gate: state, regions: service.regions.count,
            // Installed regions that cannot be served, with the reason: never counted as served.
            damaged: damaged.isEmpty ? nil : damaged.keys.sorted().map { ServerDocument.Health.Damage(id: $0, reason: damaged[$0] ?? "") },
            usesLeft: snapshot.usesLeft)
        health.update = snapshot.update.map {
            ServerDocument.Health.Update(
                state: $0.state, version: $0.version, releaseNotes: $0.releaseNotes, storeURL: $0.storeURL, promptsFrom: $0.promptsFrom.map(ISODate.string),
                usesLeft: $0.usesLeft, usesLeftThisIncluded: $0.usesLeftThisIncluded)
        }
        switch snapshot.standing {
        case .open: break
        case .failing(let failure): health.message = failure
        case .closed(let closed): health.requiredVersion = closed.requiredVersion
        }
        var response = json(state == "open" ? 200 : 503, document: health, cors: false)
        response.headers.append(("Cache-Control", "no-store"))
        if state != "open" { response.headers.append(("Retry-After", "5")) }
        return response
    }

    /// The answer for a region that is not served: 404 when it is not installed; 500 with the
    /// reason when it is but its file is missing, cut short or unreadable (never a quiet 404).
    func notServed(_ id: String) -> HTTPServerResponse {
        guard let reason = service.damaged[id] else { return text(404, "region \(id) is not installed\n", cors: true) }
        return text(500, "region \(id) is installed but damaged: \(reason); mapgate sync \(id) installs it again\n", cors: true)
    }

    /// `reason` with each absolute path cut to its last two parts (`…/regions/x.mbtiles`): an
    /// answer any web page may read (CORS) names none of the user's folders (found by an attack:
    /// a damaged region's 500 named the data directory, `/home/USER/…`, to every site). The server's
    /// log and `/health` (same origin only) keep the whole path.
    package static func withoutFolders(_ reason: String, home: String? = ProcessInfo.processInfo.environment["HOME"]) -> String {
        // The home folder first, as `~` (a path in it may hold spaces, which the cut below,
        // word by word, would leave half there: found by an attack, `…/alice home/My Maps/…`).
        var reason = reason
        if let home, home.count > 1, home.hasPrefix("/") {
            reason = reason.replacing(home.hasSuffix("/") ? home : home + "/", with: "~/")
        }
        return reason.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            // (Lines stay lines: a word is what lies between spaces, a path never spans two.)
            guard let slash = word.firstIndex(of: "/"), word[..<slash].allSatisfy({ "(\"'`«「".contains($0) }) else { return String(word) }
            let parts = word[slash...].split(separator: "/")
            guard parts.count > 2 else { return String(word) }
            return word[..<slash] + "…/" + parts.suffix(2).joined(separator: "/")
        }.joined(separator: " ")
    }

    // MARK: Helpers

    /// The 403 answer while the gate is closed, naming the required version and the store URL;
    /// 503 while the server cannot read or write the gate's state (it fails closed).
    func refusalWhileClosed(json isJSON: Bool, language: PageLanguage = .english) -> HTTPServerResponse? {
        // One look at the gate per request: one lock, one clock reading, one consistent answer.
        switch service.gate.snapshot.standing {
        case .open:
            return nil
        case .failing(let failure):
            // Read by any web page (CORS): no folder of the user's (found by an attack: the state
            // file's path named the home folder).
            let message = Self.withoutFolders("the update gate cannot be checked (\(failure)); tiles are withheld until it can")
            var response =
                isJSON
                ? json(503, document: ServerDocument.Refusal.gateUnavailable(message: message), cors: true)
                : html(503, ViewerPage.document(title: "gate unavailable", body: "<p>\(ViewerPage.escape(message))</p>"))
            response.headers.append(("Retry-After", "5"))
            return response
        case .closed(let closed):
            let message = "update required: install mapgate \(closed.requiredVersion) to keep using these maps"
            if isJSON {
                let refusal = ServerDocument.Refusal.updateRequired(message: message, requiredVersion: closed.requiredVersion, storeURL: closed.storeURL)
                return json(403, document: refusal, cors: true)
            }
            return html(403, ViewerPage.closed(closed, language: language))
        }
    }

    /// The region's open file; reopened when the installed file is another one (an update
    /// renames a new file over it: the old connection would keep reading the old file).
    func file(for region: TileService.Region) throws -> MBTilesFile {
        if let open = files[region.record.id], open.identity == region.file { return open.file }
        files[region.record.id] = nil
        // Installed files are replaced by rename, never written in place: no locking needed. The
        // file checked, not the path: a file swapped in since is not read (``HeldFile``).
        let file = try MBTilesFile(path: region.path, immutable: true, openingThrough: region.held?.openablePath)
        files[region.record.id] = (region.file, file)
        return file
    }

    /// `http://host:port` as the client reached us (from `Host`, which the HTTP layer checked
    /// against the allow-list), else the bound address.
    func baseURL(_ request: HTTPServerRequest) -> String {
        if let host = request.header("Host"), !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) {
            return "http://\(HTTPHostPolicy.canonical(host))"
        }
        return service.fallbackHost
    }

    /// Why a decoded path is refused (nil when it is not): a `.` or `..` segment, `//`, a
    /// backslash or a NUL, each a way to name one file by several paths or one outside what is
    /// served. Dots inside a segment are a name's (found by an attack: a region `a..b`, which the
    /// id pattern allows, was installed and announced, and every request for it was 400).
    ///
    /// One pass over the path's bytes: it runs for every request (the string searches it was
    /// made of took 9 % of a tile's answer on h2o; issue 42, item 2).
    static func pathProblem(_ path: String) -> String? {
        var backslash = false
        var nul = false
        var emptySegment = false
        var dotSegment = false
        var segment = (length: 0, dots: 0)
        var afterSlash = false
        for byte in path.utf8 {
            if byte == 0x2F {
                if afterSlash { emptySegment = true }
                if segment.length > 0, segment.length <= 2, segment.dots == segment.length { dotSegment = true }
                segment = (0, 0)
                afterSlash = true
                continue
            }
            afterSlash = false
            segment.length += 1
            if byte == 0x2E { segment.dots += 1 }
            else if byte == 0x5C { backslash = true }
            else if byte == 0 { nul = true }
        }
        if segment.length > 0, segment.length <= 2, segment.dots == segment.length { dotSegment = true }
        // (not translated: an HTTP answer's body, in English as every one is)
        return if backslash { "a backslash is not a path separator here" }
        else if nul { "it holds a NUL" }
        else if emptySegment { "it has an empty segment (//)" }
        else if dotSegment { "it has a . or .. segment" }
        else { nil }
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
        match(ifNoneMatch: header, etag: etag) != nil
    }

    /// How `If-None-Match` matches `etag`: `.tag` when it names it (the client holds that
    /// representation), `.any` when only its `*` matches (the client holds some representation,
    /// or none: RFC 9110 §13.1.2 makes `*` true whenever the server has one), nil otherwise.
    static func match(ifNoneMatch header: String, etag: String) -> IfNoneMatch? {
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        var found: IfNoneMatch?
        for item in header.split(separator: ",") {
            let tag = item.trimmingWhitespace()
            if tag == "*" {
                found = .any
            } else if (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == opaque {
                return .tag
            }
        }
        return found
    }

    enum IfNoneMatch { case tag, any }

    /// Whether `If-Match: header` holds for a resource tagged `etag`: `*`, or a strong tag equal
    /// to it (a weak tag never matches there).
    static func matches(ifMatch header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            let tag = item.trimmingWhitespace()
            return tag == "*" || (!tag.hasPrefix("W/") && !etag.hasPrefix("W/") && tag == etag)
        }
    }

    /// A plain-text answer. One any web page may read (`cors`) that reports a failure names no
    /// folder of the user's (``withoutFolders(_:)``).
    func text(_ status: Int, _ text: String, extra: [(name: String, value: String)] = [], cors: Bool = false) -> HTTPServerResponse {
        let body = cors && status >= 500 ? Self.withoutFolders(text) : text
        return HTTPServerResponse(status: status, headers: (cors ? Self.anyOrigin : []) + extra + [("Content-Type", "text/plain; charset=utf-8")], body: Data(body.utf8))
    }

    /// A ``ServerDocument``'s answer; one that cannot be encoded is a 500 that says so, never a 200
    /// with no body.
    func json(_ status: Int, document: some Encodable, cors: Bool) -> HTTPServerResponse {
        do {
            return HTTPServerResponse(
                status: status, headers: (cors ? Self.anyOrigin : []) + [("Content-Type", "application/json")], body: try ServerDocument.encode(document))
        } catch {
            return text(500, "cannot write this answer as JSON: \(errorMessage(error))\n", cors: cors)
        }
    }

    /// A document answer (TileJSON, a generated style) made revalidatable: its ETag is a hash of
    /// its bytes (which depend on the Host and the language asked with), `Cache-Control: no-cache`,
    /// and a request whose `If-None-Match` names it gets 304 without the body. A viewer reloaded,
    /// or a caching proxy, then downloads it again only when it changed.
    func revalidatable(_ response: HTTPServerResponse, _ request: HTTPServerRequest) -> HTTPServerResponse {
        guard response.status == 200, case .data(let body) = response.body, let hash = try? SHA256Hasher.hex(of: body) else { return response }
        let etag = "\"\(hash.prefix(20))\""
        let headers = response.headers + [("Cache-Control", "no-cache"), ("ETag", etag)]
        if let match = request.header("If-None-Match"), Self.matches(ifNoneMatch: match, etag: etag) {
            return HTTPServerResponse(status: 304, headers: headers.filter { $0.name != "Content-Type" } + [("Content-Length", String(body.count))])
        }
        var validated = response
        validated.headers = headers
        return validated
    }

    func html(_ status: Int, _ page: HTMLPage) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status,
            // A page's language is the browser's (Accept-Language): a cache keeps one per language.
            headers: [
                ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"), ("Vary", "Accept-Language"),
                ("Content-Security-Policy", page.contentSecurityPolicy),
            ],
            body: Data(page.html.utf8))
    }
}
