import FoundationEssentials
import MapGateBase
import MapGateStorage

/// TileJSON and the tiles themselves (answered from the shared cache when it holds them).
extension TileRequestHandler {
    func tileJSON(_ id: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        // Always a list (TileJSON 3.0.0 requires it): a raster region's is empty.
        let layers = region.record.format == .pbf ? region.vectorLayersJSON.flatMap { try? JSONValue(parsing: Data($0.utf8)) }?.arrayValue ?? [] : []
        let tileJSON = TileJSON(
            tiles: ["\(baseURL(request))/\(id)/{z}/{x}/{y}.\(Self.extensions(region.record.format)[0])"], name: region.name,
            version: TileJSON.semanticVersion(region.record.version), bounds: TileJSON.unwrappedBounds(region.bounds), center: region.center, minzoom: region.minzoom, maxzoom: region.maxzoom,
            format: region.record.format.rawValue, attribution: region.attribution.map(AttributionHTML.sanitized),
            description: region.description, vectorLayers: TileJSON.schemaLayers(layers))
        guard let body = try? tileJSON.encoded() else { return text(500, "cannot write the TileJSON of region \(id)\n", cors: true) }
        return revalidatable(HTTPServerResponse(status: 200, headers: Self.anyOrigin + [("Content-Type", "application/json")], body: body), request)
    }

    func tile(_ parts: [String], _ request: HTTPServerRequest) -> HTTPServerResponse {
        let id = parts[0]
        if let refusal = refusalWhileClosed(json: true) { return refusal }
        guard let region = service.region(id) else { return notServed(id) }
        let last = parts[3].utf8.split(separator: 0x2E, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // One address per tile: `00` is not `0` (found by an attack: `/R/00/0/0.png` was answered
        // as `/R/0/0/0.png`, another URL for caches to keep the same tile under).
        let numbers = [parts[1], parts[2], last[0]]
        guard last.count == 2, !numbers.contains(where: { $0.count > 1 && $0.hasPrefix("0") }),
            let coordinate = TileCoordinate(z: parts[1], x: parts[2], y: last[0])
        else {
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
        // The validator follows the tile's bytes as stored, not the region's file: a tile an
        // update left alone keeps its ETag, so browsers and proxies revalidate it (304) instead
        // of downloading every tile again (issue 38). Made once per kept answer.
        guard let digest = digest(ofTile: body) else { return text(500, "cannot hash tile \(z)/\(x)/\(y) of region \(id)\n", cors: true) }
        var etag = "\"" + digest.prefix(24)
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
        if region.record.format == .pbf, !GzipInflater.isGzip(body), GzipInflater.isZlib(body) {
            // zlib (some older writers): sent unpacked to every client (found by an attack: it went
            // out as it was, without a Content-Encoding, and no map could read it; a browser's
            // `deflate` is this format, but not every client asks for it).
            do {
                body = try GzipInflater.decompress(body, maximumSize: Self.maximumUnpackedTileSize)
            } catch {
                return text(500, "cannot unpack tile \(z)/\(x)/\(y) of region \(id): \(errorMessage(error))\n", cors: true)
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

    /// The answer to a tile request whose client has gone: the connection is closed, and the
    /// label keeps it from counting as a tile answered.
    private func gone() -> HTTPServerResponse {
        var gone = text(503, "this connection was closed for sending before its tile was answered; ask again on a connection kept open\n", cors: true)
        gone.closesConnection = true
        gone.label = Self.unheldTileLabel
        return gone
    }

    /// A tile's 200, or 304 when `If-None-Match` matches its ETag. The first tile sent (to a GET:
    /// a HEAD sends no tile), or 304 to a client that named the tile's ETag, delivers the
    /// server's use: the gate's record is told before it goes. A 304 to `If-None-Match: *` does
    /// not: it shows no tile is held, and sends none.
    ///
    /// `If-Match` naming none of the tile's tags (strong comparison; `*` matches any tile) is
    /// 412, and sends nothing (RFC 9110 §13.1.1; found by an attack: it was ignored).
    func answer(_ prepared: HTTPPreparedResponse, etag: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        if let ifMatch = request.header("If-Match"), !Self.matches(ifMatch: ifMatch, etag: etag) {
            return text(412, "the tile's ETag is \(etag), which If-Match does not name\n", extra: [("ETag", etag)], cors: true)
        }
        let match = request.header("If-None-Match").flatMap { Self.match(ifNoneMatch: $0, etag: etag) }
        // Once delivered, one load per request: no compare-and-exchange on a shared word.
        if request.method != "HEAD", match != .any, let use = service.startUse, !use.isDelivered {
            // A tile the HTTP layer would not send (answers not yet taken fill what it keeps)
            // delivers nothing: refused here, before the use is told.
            guard match != nil || request.bodyFits(prepared.body.count) else {
                var busy = text(503, "server busy: answers not yet taken by their clients fill what this server keeps\n", cors: true)
                busy.headers.append(("Retry-After", "1"))
                return busy
            }
            // A client that has gone (a tab closed, a request cancelled by a map zoomed away
            // from it, `curl --max-time`) would get nothing for the use: the connection is
            // closed instead, and the use waits for a tile that reaches someone (found by an
            // attack: the first tile, answered to a closed connection, delivered the use).
            // (A client that only shut down its sending side, as `nc -N` does, reads the reason.)
            if request.clientHasGone() { return gone() }
            do {
                // Its day of serving runs from a use delivered now (the monitor reads it).
                if try use.deliver() { service.gate.recordStartDelivered() }
            } catch {
                let message = "the update gate cannot be checked (\(errorMessage(error))); tiles are withheld until it can"
                var refusal = json(503, document: ServerDocument.Refusal.gateUnavailable(message: message), cors: true)
                refusal.headers.append(("Retry-After", "5"))
                return refusal
            }
        }
        else if request.method != "HEAD", match != .any, service.gate.isServingUseDue, request.clientHasGone() {
            // The same for the tile that pays a day of serving (counted at the monitor's next look).
            return gone()
        }
        if match != nil {
            // The 200's headers but its Content-Type, and the length of the tile it stands for,
            // as RFC 9110 §8.6 allows (never a 0).
            let length = ("Content-Length", String(prepared.body.count))
            var notModified = HTTPServerResponse(status: 304, headers: prepared.headers.filter { $0.name != "Content-Type" } + [length])
            // Not a tile answered, for the use and the day's count (TileServer's log).
            if match == .any { notModified.label = Self.unheldTileLabel }
            return notModified
        }
        return HTTPServerResponse(prepared: prepared)
    }
}
