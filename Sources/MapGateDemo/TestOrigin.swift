import FoundationEssentials
import MapGate
import Synchronization

/// A real HTTP/1.1 origin on 127.0.0.1 for the tests and the demo: static files from a folder,
/// `Range` (206/416), `ETag`/`If-None-Match` (304), and faults asked for in the path.
///
/// A fault is a path prefix `/_fault/<spec>/` before the file's path, `<spec>` being
/// comma-separated items:
/// - `status=N`: answer status N with a short body;
/// - `cut=N`: announce the whole length but send only N body bytes, then close;
/// - `stall=S`: after the head (and the `cut` bytes, if any) send nothing for S seconds;
/// - `drop`: close the connection without answering;
/// - `redirect`: answer 302 to the same path without the fault;
/// - `times=N`: apply the fault to the first N requests of this URL only, then serve normally;
/// - `weak`: (every request, whatever `times` says) a weak `ETag` and a `Last-Modified` date, and
///   `If-Range` kept to RFC 9110: only the date matches, a weak ETag never does;
/// - (not a fault) a path that is no file, beside a file of its name plus `.redirect`, is answered
///   302 to that file's first line, as a server's configured redirect (a catalog moved to a CDN);
/// - `garble`: (every request, whatever `times` says) a part's (206) first byte is sent with its
///   bits inverted, as a proxy that answers a range with the wrong bytes; whole answers are sound.
public final class TestOrigin: Sendable {
    public struct Hit: Sendable {
        public var method: String
        public var path: String
        public var range: String?
        public var ifRange: String?
        public var userAgent: String?
        /// The `Authorization` header (system mode's catalog credentials).
        public var authorization: String?
        public var target: String
    }

    public let root: String
    private let state: OriginState
    private let server: HTTPServer

    public init(root: String, port: UInt16 = 0) throws {
        self.root = PathText.standardized(root)
        var settings = HTTPServer.Settings()
        settings.port = port
        settings.idleTimeout = 5
        // `stall` blocks its connection's thread: one thread per connection, not the event loop.
        settings.threadPerConnection = true
        settings.maxConnections = 512
        let state = OriginState(root: self.root)
        self.state = state
        server = try HTTPServer(settings: settings) { OriginHandler(origin: state) }
    }

    public var baseURL: String { server.baseURL }
    public var port: UInt16 { server.port }

    /// Every request served so far, oldest first.
    public var requests: [Hit] { state.hits.withLock { $0 } }

    #if DEBUG
    /// For the tests (debug builds only: a release build carries no test-only API).
    public func clearRequests() { state.hits.withLock { $0.removeAll() } }
    #endif

    /// An origin nobody holds stops as ``stop()`` does: its server's own `deinit` would wait for
    /// a stalled answer to run its full time (seconds of every test that stalls one, at its end).
    deinit {
        stop()
    }

    /// Stops serving; a stalled answer gives up at once.
    public func stop() {
        state.stopping.store(true, ordering: .relaxed)
        server.stop()
    }
}

/// What the origin's handlers share: the folder, the requests seen, the faults' counts.
private final class OriginState: Sendable {
    let root: String
    let hits = Locked<[TestOrigin.Hit]>([])
    let faultCounts = Locked<[String: Int]>([:])
    let stopping = Atomic<Bool>(false)

    init(root: String) { self.root = root }

    func record(_ hit: TestOrigin.Hit) { hits.withLock { $0.append(hit) } }

    /// Counts a faulty URL's uses; true while the fault still applies.
    func faultApplies(key: String, times: Int?) -> Bool {
        guard let times else { return true }
        return faultCounts.withLock { counts in
            let used = counts[key, default: 0]
            counts[key] = used + 1
            return used < times
        }
    }
}

/// The handler lent to each request.
private final class OriginHandler: HTTPRequestHandler {
    let origin: OriginState
    init(origin: OriginState) { self.origin = origin }

    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        origin.record(
            TestOrigin.Hit(
                method: request.method, path: request.path, range: request.header("Range"),
                ifRange: request.header("If-Range"), userAgent: request.header("User-Agent"), authorization: request.header("Authorization"),
                target: request.target))
        var path = request.path
        var fault = Fault()
        if path.hasPrefix("/_fault/") {
            let rest = path.dropFirst("/_fault/".count)
            let spec = rest.prefix { $0 != "/" }
            path = String(rest.dropFirst(spec.count))
            let parsed = Fault(spec: String(spec))
            if origin.faultApplies(key: request.path, times: parsed.times) { fault = parsed }
            fault.weak = parsed.weak
            fault.garble = parsed.garble
        }
        if fault.drop { return .drop }
        if fault.redirect {
            return HTTPServerResponse(status: 302, headers: [("Location", path + (request.query.map { "?" + $0 } ?? ""))])
        }
        if let status = fault.status {
            return HTTPServerResponse(status: status, headers: [("Content-Type", "text/plain")], body: Data("fault: status \(status)\n".utf8))
        }
        return serveFile(path: path, request: request, fault: fault)
    }

    private func serveFile(path: String, request: HTTPServerRequest, fault: Fault) -> HTTPServerResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPServerResponse(status: 405, headers: [("Allow", "GET, HEAD")])
        }
        let full = (origin.root + "/" + path).replacing("//", with: "/")
        let resolved = PathText.standardized(full)
        var isDirectory = false
        if resolved.hasPrefix(origin.root + "/"), !FileManager.default.fileExists(atPath: resolved),
            let moved = try? String(contentsOfFile: resolved + ".redirect", encoding: .utf8), let location = moved.split(separator: "\n").first
        {
            return HTTPServerResponse(status: 302, headers: [("Location", String(location))])
        }
        guard resolved.hasPrefix(origin.root + "/"), FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory),
            !isDirectory, let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
            let handle = UnixFile(forReadingAtPath: resolved)
        else {
            return HTTPServerResponse(status: 404, headers: [("Content-Type", "text/plain")], body: Data("not found: \(path)\n".utf8))
        }
        let size = (attributes[.size] as? UInt).map { Int($0) } ?? 0
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let etag = (fault.weak ? "W/" : "") + "\"\(String(size, radix: 16))-\(String(Int(modified * 1000), radix: 16))\""
        var headers: [(name: String, value: String)] = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", contentType(path))]
        // An HTTP date, enough for If-Range's exact comparison.
        let second = Int(modified) % 60
        let lastModified = "Mon, 01 Jan 2024 00:00:\(second < 10 ? "0" : "")\(second) GMT"
        if fault.weak { headers.append(("Last-Modified", lastModified)) }
        if let match = request.header("If-None-Match"), match == etag || match == "*" {
            return HTTPServerResponse(status: 304, headers: [("ETag", etag)])
        }
        var range = 0..<size
        var status = 200
        let validatorMatches: (String) -> Bool = { fault.weak ? $0 == lastModified : $0 == etag }
        if let rangeHeader = request.header("Range"), request.header("If-Range").map(validatorMatches) ?? true {
            guard let requested = Self.parseRange(rangeHeader, size: size) else {
                return HTTPServerResponse(status: 416, headers: [("Content-Range", "bytes */\(size)")])
            }
            range = requested
            status = 206
            headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"))
        }
        var toSend = range.count
        if let cut = fault.cut {
            toSend = min(toSend, cut)
        } else if fault.stall != nil {
            toSend = 0
        }
        let body = FileBody(
            handle: handle, start: range.lowerBound, sending: toSend, length: range.count, stall: fault.stall, stopping: origin,
            garbles: fault.garble && status == 206)
        var response = HTTPServerResponse(status: status, headers: headers, length: range.count, stream: body)
        if fault.cut != nil || fault.stall != nil { response.closesConnection = true }
        return response
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n`; nil when unsatisfiable.
    static func parseRange(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0, size > 0 else { return nil }
            return max(0, size - suffix)..<size
        }
        guard let start = Int(parts[0]), start < size else { return nil }
        let end = parts[1].isEmpty ? size - 1 : min(Int(parts[1]) ?? -1, size - 1)
        guard end >= start else { return nil }
        return start..<(end + 1)
    }

    private func contentType(_ path: String) -> String {
        // (not translated: a media type)
        if path.hasSuffix(".json") { return "application/json" }
        // (not translated: a media type)
        if path.hasSuffix(".html") { return "text/html" }
        // (not translated: a media type)
        return "application/octet-stream"
    }
}

/// A file's bytes as the client takes them: `sending` bytes of the `length` announced, then
/// (for `stall`) nothing for that long, then the connection closes when it falls short.
private final class FileBody: HTTPBodyStream {
    let handle: UnixFile
    let start: Int
    let sending: Int
    let length: Int
    let stall: Double?
    let stopping: OriginState
    /// The body's first byte goes out inverted (the `garble` fault).
    let garbles: Bool

    init(handle: UnixFile, start: Int, sending: Int, length: Int, stall: Double?, stopping: OriginState, garbles: Bool) {
        (self.handle, self.start, self.sending, self.length, self.stall, self.stopping) = (handle, start, sending, length, stall, stopping)
        self.garbles = garbles
    }

    deinit { try? handle.close() }

    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> HTTPBodyChunk {
        guard offset < sending else {
            if let stall {
                let deadline = Date().addingTimeInterval(stall)
                while Date() < deadline, !stopping.stopping.load(ordering: .relaxed) { Threads.sleep(0.02) }
            }
            return .abort
        }
        guard (try? handle.seek(toOffset: UInt64(start + offset))) != nil,
            let chunk = try? handle.read(upToCount: min(buffer.count, sending - offset)), !chunk.isEmpty
        else { return .abort }
        chunk.copyBytes(to: buffer)
        if garbles, offset == 0 { buffer[0] = ~buffer[0] }
        return .bytes(chunk.count)
    }
}

private struct Fault {
    var status: Int?
    var cut: Int?
    var stall: Double?
    var drop = false
    var redirect = false
    var times: Int?
    var weak = false
    var garble = false

    init() {}

    init(spec: String) {
        for item in spec.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            let value = pair.count > 1 ? pair[1] : ""
            switch pair[0] {
            case "status": status = Int(value)
            case "cut": cut = Int(value)
            case "stall": stall = Double(value)
            case "drop": drop = true
            case "redirect": redirect = true
            case "times": times = Int(value)
            case "weak": weak = true
            case "garble": garble = true
            default: break
            }
        }
    }
}
