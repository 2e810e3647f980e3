import FoundationEssentials
import MapGateBase
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What every callback of one daemon shares. Handlers are lent one per request from a pool
/// (a handler is used by one thread at a time: `handlers` is only touched under its mutex).
final class HTTPDaemonContext: Sendable {
    let settings: HTTPServer.Settings
    let registry: HTTPConnectionRegistry
    let budget: HTTPBodyBudget
    /// ``budget``'s ``HTTPBodyBudget/fits(_:)``, made once and handed to every request.
    private let bodyFits: @Sendable (Int) -> Bool
    let log: (@Sendable (HTTPServer.LogEntry) -> Void)?
    private let makeHandler: @Sendable () -> any HTTPRequestHandler
    private let handlers = Locked<[UnsafeSendable<any HTTPRequestHandler>]>([])
    /// The server is stopping: a request that comes is refused (503, `Retry-After: 1`).
    let isStopping = Atomic<Bool>(false)
    /// The server hands its socket back and finishes the requests under way: each is answered
    /// as usual, and its connection closed after (``HTTPServer/stop()``).
    let isDraining = Atomic<Bool>(false)
    /// Every answer closes its connection now.
    private var closesEveryConnection: Bool { isStopping.load(ordering: .relaxed) || isDraining.load(ordering: .relaxed) }

    init(
        settings: HTTPServer.Settings, gauge: HTTPConnectionGauge, log: (@Sendable (HTTPServer.LogEntry) -> Void)?,
        makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) {
        self.settings = settings
        self.log = log
        self.makeHandler = makeHandler
        let budget = HTTPBodyBudget(limit: settings.maxUnsentBodyBytes)
        self.budget = budget
        bodyFits = { budget.fits($0) }
        registry = HTTPConnectionRegistry(
            headTimeout: settings.readTimeout, stillTimeout: settings.library == .h2o ? max(1, settings.idleTimeout.rounded(.up)) : nil, evictableAfter: settings.evictableAfter ?? settings.idleTimeout / 2, gauge: gauge) { target in
            log?(HTTPServer.LogEntry(method: "-", path: target, status: 408, bytes: 18, seconds: settings.readTimeout))
        }
    }

    /// A request head as the HTTP library parsed it (libmicrohttpd keeps it from its first call to
    /// its answer in the request's context pointer). Not `Sendable`, and needs not be: both
    /// libraries run all the callbacks of one connection on the same thread.
    final class Head {
        let method: String
        let version: String
        let target: String
        let headers: [(name: String, value: String)]
        /// When the head was taken (``MonotonicClock/shownNanoseconds``: for the log's duration only).
        let started = MonotonicClock.shownNanoseconds
        let record: HTTPConnectionRecord?
        /// The head deadline's watchdog answered 408 on this connection already.
        let timedOut: Bool

        /// A head whose target is the one `record` noted (libmicrohttpd's URI log callback), or
        /// `target` when given; the connection is marked as in a request.
        init(method: String, version: String, target given: String? = nil, headers: [(name: String, value: String)], record: HTTPConnectionRecord?) {
            self.method = method
            self.version = version
            self.record = record
            var target = given ?? ""
            var timedOut = false
            record?.state.withLock { state in
                if let given {
                    state.target = given
                    state.answered = false
                } else {
                    target = state.target
                }
                timedOut = state.timedOut
                state.inRequest = true
            }
            self.target = target
            self.timedOut = timedOut
            // A field value holds no trailing whitespace (RFC 9110 §5.5; libmicrohttpd drops
            // only the leading: `Host: 127.0.0.1:8080 ` was refused as another host). Copied only
            // when one has some: this runs for every request.
            func endsInWhitespace(_ text: String) -> Bool { text.utf8.last.map { $0 == 0x20 || $0 == 0x09 } ?? false }
            self.headers =
                !headers.contains { endsInWhitespace($0.value) }
                ? headers
                : headers.map { field in
                    var value = field.value
                    while endsInWhitespace(value) { value.removeLast() }
                    return (field.name, value)
                }
        }
    }

    /// A connection the library accepted on `socket`: tracked, and admitted or not (``HTTPConnectionRegistry/add(_:admittingUpTo:perClientLimit:total:)``).
    func opened(socket: Int32) -> HTTPConnectionRecord {
        let record = HTTPConnectionRecord(socket: socket, now: HTTPConnectionRegistry.now, remoteClient: HTTPConnectionRecord.remoteClient(of: socket))
        registry.add(record, admittingUpTo: settings.maxConnections, perClientLimit: settings.maxConnectionsPerClient, total: settings.maxConnections + settings.reserveConnections)
        return record
    }

    /// A request on `record`'s connection is done (its answer sent, or the client went): the
    /// connection waits for its next head, and a prepared body's share of the budget comes back.
    /// `pendingBytes` of the next head were read already (pipelined behind the request: h2o's glue
    /// says; libmicrohttpd does not): they count as its start, so its deadline runs from now (found
    /// by an attack: such a head got the idle timeout, 30 s, instead of the head's 10).
    ///
    /// `received`: the bytes read from the socket so far, when the library counts them (h2o's
    /// glue): the kernel is then not asked after every answer (`TCP_INFO`, 5 % of an answer's
    /// time, issue 42). Bytes the kernel holds that were not read yet count as the next head's
    /// start, which they are. What moved on the socket is then read by the watchdog's next look.
    func completed(_ record: HTTPConnectionRecord, pendingBytes: Int = 0, received counted: UInt64? = nil) {
        let transfer = counted == nil ? HTTPConnectionRecord.transfer(record.socket) : nil
        let now = HTTPConnectionRegistry.now
        let held = record.state.withLock { state in
            state.inRequest = false
            state.waitingSince = now
            let received = counted ?? transfer?.received ?? 0
            state.baselineBytes = received - min(received, UInt64(pendingBytes))
            state.headSeenAt = nil
            state.movedBytes = counted == nil ? transfer?.moved ?? state.movedBytes : nil
            state.movedAt = now
            defer { state.heldBodyBytes = 0 }
            return state.heldBodyBytes
        }
        if held > 0 { budget.release(held) }
    }

    /// `record`'s connection closed. A request the library refused itself (its target noted, no
    /// answer of ours) is logged with `libraryStatus`.
    func closed(_ record: HTTPConnectionRecord, libraryStatus: () -> Int) {
        let state = record.state.withLock { $0 }
        if !state.answered, !state.timedOut, !state.target.isEmpty, let log {
            log(HTTPServer.LogEntry(method: "-", path: state.target, status: libraryStatus(), bytes: 0, seconds: 0))
        }
        registry.remove(record)
    }

    /// Empties the handler pool; the handlers are released here, outside its lock.
    func discardIdleHandlers() {
        let idle = handlers.withLock { pool in
            defer { pool.removeAll() }
            return pool
        }
        withExtendedLifetime(idle) {}
    }

    /// Whether `byte` may be in a token (RFC 9110 §5.6.2's tchar).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// What the HTTP layer refuses before any route: an unsupported version (505), a message
    /// that cannot be framed safely (400), a missing or repeated Host (400), a Host not on the
    /// allow-list (421), a body over 1 MiB (413), a connection that opened past `maxConnections` (503).
    /// Each closes the connection.
    func refusal(for head: Head) -> HTTPServerResponse? {
        guard head.version == "HTTP/1.1" || head.version == "HTTP/1.0" else {
            return Self.refusal(505, "HTTP version \(head.version) is not supported (HTTP/1.1 is)\n")
        }
        if let tooLarge = headTooLarge(head) { return tooLarge }
        // RFC 9112 §3.2: a target holds no whitespace or control characters (libmicrohttpd,
        // told not to refuse a missing Host itself, also passes `GET /a b HTTP/1.1` on as `/a b`).
        // Nor bytes outside ASCII (found by an attack: `/fonts/\xff\xfe/0-255.pbf` was read with
        // U+FFFD in their place and answered, where `%ff` is refused).
        if head.target.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return Self.refusal(400, "malformed request target: it holds a space, a control character or a byte outside ASCII; percent-encode them (RFC 9112 §3.2)\n")
        }
        // One pass over the header fields: most requests carry neither Content-Length nor
        // Transfer-Encoding, and one Host (nothing is allocated for them).
        var hostCount = 0
        var firstHost: String?
        var hasFraming = false
        var expects = false
        for field in head.headers {
            // RFC 9112 §5.1: no whitespace between a field name and its colon, and a server MUST
            // refuse such a message with 400 (libmicrohttpd keeps `Content-Length ` as another
            // name, which the framing checks below would pass over: request smuggling). A name is
            // a token (RFC 9110 §5.1): libmicrohttpd passed on `X\u{1}Y`, which h2o refuses.
            if field.name.isEmpty || !field.name.utf8.allSatisfy(Self.isTokenByte) {
                return Self.refusal(400, "a header field name that is empty or not a token: whitespace before its colon, or a control character (RFC 9110 §5.1)\n")
            }
            if HTTPServerRequest.equalIgnoringASCIICase(field.name, "Host") {
                hostCount += 1
                if firstHost == nil { firstHost = field.value }
            } else if HTTPServerRequest.equalIgnoringASCIICase(field.name, "Content-Length")
                || HTTPServerRequest.equalIgnoringASCIICase(field.name, "Transfer-Encoding")
            {
                hasFraming = true
            } else if HTTPServerRequest.equalIgnoringASCIICase(field.name, "Expect") {
                expects = true
            }
        }
        if hasFraming, let problem = Self.framingProblem(head.headers) { return Self.refusal(400, problem) }
        // No route takes a body, so there is nothing to continue to (found by an attack:
        // libmicrohttpd answered `Expect: 100-continue` with its 100, took the bytes after the head
        // for the body, then dropped the connection after the tile's route had delivered the
        // gate's use). RFC 9110 §10.1.1: 417 when the expectation cannot be met.
        if expects { return Self.refusal(417, "Expect is not supported: no request here has a body\n") }
        guard hostCount <= 1, head.version == "HTTP/1.0" || hostCount == 1 else {
            return Self.refusal(400, "a request needs exactly one Host header\n")
        }
        if let policy = settings.hostPolicy {
            // An absolute-form target's authority takes the place of Host (RFC 9112 §3.2.2).
            let host = HTTPServerRequest.absoluteForm(head.target)?.authority ?? firstHost
            if let host {
                guard policy.allows(host) else { return Self.refusal(421, "this server does not answer for host \(host)\n") }
            } else {
                // HTTP/1.0 without Host: no rebinding page can send that, so it is answered on a
                // loopback connection (a local client reaching a loopback address).
                guard let socket = head.record?.socket, HTTPConnectionRecord.isOnLoopback(socket) else {
                    return Self.refusal(421, "this server does not answer requests without a Host header from outside this machine\n")
                }
            }
        }
        if hasFraming {
            // No route takes a body, so none is read: one sent a byte at a time would hold the
            // connection past every deadline (the head's covers the head only).
            // Every value of every Content-Length field, a list (`31, 31`) included: framingProblem
            // has them all digits and equal (found by an attack: `Int("31, 31")` is nil, so the
            // list was taken for no body, and on h2o, which is told nothing of the body, the
            // request hidden in it was answered).
            let declaresBody = head.headers.contains { field in
                HTTPServerRequest.equalIgnoringASCIICase(field.name, "Content-Length")
                    && field.value.split(separator: ",", omittingEmptySubsequences: false).contains { Int($0.trimmingWhitespace()) != 0 }
            }
            if declaresBody { return Self.refusal(413, "request bodies are not accepted\n") }
        }
        // Admission is decided once per connection, when it opens: past `maxConnections` a new
        // connection gets 503; one admitted before is never refused for the others.
        let isAdmitted = head.record?.state.withLock { $0.isAdmitted } ?? (registry.count <= settings.maxConnections)
        // `/health` is answered on any connection libmicrohttpd took (the reserve past
        // `maxConnections` included): a monitor must see a busy server as busy, not as down.
        let isHealth = head.method == "GET" && (head.target == "/health" || head.target.hasPrefix("/health?"))
        if (!isAdmitted && !isHealth) || isStopping.load(ordering: .relaxed) {
            var busy = Self.refusal(503, "server busy\n")
            busy.headers.append(("Retry-After", "1"))
            return busy
        }
        return nil
    }

    /// Answers a request whose head (and body, if any) is in.
    func answer(_ head: Head, on connection: some HTTPAnswerSink) -> Bool {
        // `OPTIONS *` asks about the server as a whole (RFC 9110 §9.3.7): what it allows.
        if head.method == "OPTIONS", head.target == "*" {
            return send(HTTPServerResponse(status: 204, headers: [("Allow", "GET, HEAD, OPTIONS")], body: Data()), for: head, on: connection)
        }
        guard var request = HTTPServerRequest(method: head.method, target: head.target, version: head.version, headers: head.headers) else {
            return send(Self.refusal(400, "malformed request target: \(HTTPServerRequest.targetProblem(head.target))\n"), for: head, on: connection)
        }
        request.bodyFits = bodyFits
        request.socket = head.record?.socket ?? -1
        let handler = handlers.withLock { $0.popLast() }?.value ?? makeHandler()
        let response = handler.respond(to: request)
        handlers.withLock { $0.append(UnsafeSendable(handler)) }
        return send(response, for: head, on: connection)
    }

    /// Queues an answer and logs it. A body made for this answer is copied once into memory
    /// the HTTP library sends from, counted against ``budget`` until the client has it; past the
    /// budget the answer is 503 (clients that do not read hold what they asked for).
    func send(_ response: HTTPServerResponse, for head: Head, on connection: some HTTPAnswerSink) -> Bool {
        var response = response
        var body: HTTPBodyBox?
        // A prepared answer's body is shared, never copied, but it is counted like a body made
        // for this answer until the request is done (the completed callback gives it back): a
        // client that does not read holds it, even once its cache dropped it.
        var held = 0
        func busy() -> (HTTPServerResponse, HTTPBodyBox) {
            let held = ByteCount.text(Int64(budget.inUse))
            let text = Data("server busy: answers not yet taken by their clients hold \(held), the most this server keeps\n".utf8)
            var refusal = Self.refusal(503, text, closes: false)
            refusal.headers.append(("Retry-After", "1"))
            return (refusal, HTTPBodyBox(HTTPBodyBytes(text), budget: nil))
        }
        switch response.body {
        case .data(let data) where response.status != 304:
            if budget.reserve(data.count) {
                body = HTTPBodyBox(HTTPBodyBytes(data), budget: budget)
            } else {
                (response, body) = busy()
            }
        case .prepared(let prepared) where response.status != 304:
            if head.record == nil {
                // No connection record to give it back from: held by the box instead.
                if budget.reserve(prepared.body.count) {
                    response.body = .shared(prepared.body)
                    body = HTTPBodyBox(prepared.body, budget: budget)
                } else {
                    (response, body) = busy()
                }
            } else if budget.reserve(prepared.body.count) {
                held = prepared.body.count
            } else {
                (response, body) = busy()
            }
        case .shared(let bytes): body = HTTPBodyBox(bytes, budget: nil)
        case .data, .stream, .prepared: break
        }
        // Recorded before the answer is queued, so the completed callback always finds it.
        if held > 0 { head.record?.state.withLock { $0.heldBodyBytes += held } }
        let queued = connection.queue(response, body: body, method: head.method, closing: response.closesConnection || closesEveryConnection)
        head.record?.state.withLock { state in
            state.answered = true
            if !queued, held > 0 {
                // Not queued: no request completes with it.
                state.heldBodyBytes -= held
                budget.release(held)
            }
        }
        if let log {
            let seconds = Double(MonotonicClock.elapsed(from: head.started, to: MonotonicClock.shownNanoseconds)) / 1e9
            log(HTTPServer.LogEntry(
                method: head.method, path: head.target, status: response.status, bytes: head.method == "HEAD" ? 0 : response.bodyLength, seconds: seconds,
                label: response.label))
        }
        return queued
    }

    /// A head that leaves too little of the connection's memory for its answer: 414 for a long
    /// target, else 431, before any handler runs. libmicrohttpd builds the answer's head in the
    /// same pool of ``HTTPServer/Settings/maxHeaderBytes`` the request head was read into; a head
    /// that fits but leaves less than the answer needs made it close the connection without an
    /// answer, after the handler had run (and a tile's handler had delivered the server's use of
    /// the gate). Measured on libmicrohttpd 0.9.75 with an 8 KiB pool, the room an answer has is
    /// about 3,940 bytes minus half the target, the field lines' bytes and 26 bytes per field
    /// (the largest answer head, an HTML page's with its CSP, failed from 3,800); heads are
    /// answered up to 13/32 of the pool by that measure (3,328 bytes at 8 KiB), a margin of
    /// about 470 bytes for the answer's head.
    func headTooLarge(_ head: Head) -> HTTPServerResponse? {
        let fields = head.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 + 26 }
        let target = head.target.utf8.count
        guard target / 2 + fields > settings.maxHeaderBytes * 13 / 32 else { return nil }
        return target / 2 > fields
            ? Self.refusal(414, "request target too long\n")
            : Self.refusal(431, "request header fields too large\n")
    }

    /// RFC 9112 §6.3: a message with both `Content-Length` and `Transfer-Encoding`, or with
    /// differing lengths, cannot be framed safely (request smuggling): 400, and close.
    static func framingProblem(_ headers: [(name: String, value: String)]) -> String? {
        let lengths = headers.filter { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Content-Length") }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingWhitespace() }
        let hasTransferEncoding = headers.contains { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Transfer-Encoding") }
        // (not translated: an HTTP answer's body, for programs)
        if hasTransferEncoding, !lengths.isEmpty { return "both Content-Length and Transfer-Encoding\n" }
        // (not translated: an HTTP answer's body)
        if hasTransferEncoding { return "request bodies (Transfer-Encoding) are not accepted\n" }
        guard lengths.allSatisfy({ !$0.isEmpty && $0.count <= 18 && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else {
            // (not translated: an HTTP answer's body)
            return "malformed Content-Length\n"
        }
        // (not translated: an HTTP answer's body)
        if Set(lengths).count > 1 { return "conflicting Content-Length values\n" }
        return nil
    }

    private static func refusal(_ status: Int, _ text: String) -> HTTPServerResponse {
        refusal(status, Data(text.utf8), closes: true)
    }

    private static func refusal(_ status: Int, _ text: Data, closes: Bool) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: text, closesConnection: closes)
    }
}
