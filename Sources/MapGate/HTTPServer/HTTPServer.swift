import CMicroHTTPD
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An error starting a server.
public struct HTTPServerError: MapGateFailure, LocalizedError, Sendable {
    public let message: String
    public var kind: FailureKind { .io }
    public var errorDescription: String? { message }
}

/// The HTTP layer: libmicrohttpd parses requests and runs connections (keep-alive, pipelining,
/// timeouts, limits); this type adds what it lacks — a total deadline for a request head (408),
/// RFC 9112 framing checks, a `Host` allow-list (421), 503 + `Retry-After` past
/// `maxConnections` — and hands each request to a pooled ``HTTPRequestHandler``. It knows
/// nothing of tiles.
public final class HTTPServer: Sendable {
    public struct Settings: Sendable {
        public var host: String = "127.0.0.1"
        /// 0 picks a free port.
        public var port: UInt16 = 0
        /// Connections answered; past it a client gets 503 with `Retry-After` (and past
        /// `maxConnections + reserveConnections`, libmicrohttpd refuses the connection).
        public var maxConnections: Int = 10_000
        public var reserveConnections: Int = 256
        /// Memory per connection for its request head and buffers (431 past it).
        public var maxHeaderBytes: Int = 16 << 10
        /// Seconds a client has to finish a request head once it started sending it (408).
        public var readTimeout: Double = 10
        /// Seconds a connection may make no progress (idle keep-alive, or a client that does
        /// not read its answer) before it is closed. Whole seconds, at least 1.
        public var idleTimeout: Double = 30
        /// Event-loop threads (epoll); 0 means one per core.
        public var threads: Int = 0
        /// One thread per connection instead of the event loop, for handlers whose bodies
        /// block (the test origin's `stall`).
        public var threadPerConnection = false
        /// Hosts answered; nil answers any `Host` (the test origin).
        public var hostPolicy: HTTPHostPolicy?
        public init() {}
    }

    /// One answer, rejections included, for the access log and metrics.
    public struct LogEntry: Sendable {
        public var method: String
        public var path: String
        public var status: Int
        public var bytes: Int
        public var seconds: Double
    }

    public let settings: Settings
    /// The port actually bound (useful when `settings.port` is 0).
    public let port: UInt16
    private let context: HTTPDaemonContext
    private let daemon: UnsafeSendable<OpaquePointer>
    private let stopped = Atomic<Bool>(false)

    /// Binds `settings.host:settings.port` and starts serving.
    public convenience init(
        settings: Settings, log: (@Sendable (LogEntry) -> Void)? = nil,
        makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) throws {
        try self.init(listener: HTTPListener(host: settings.host, port: settings.port), settings: settings, log: log, makeHandler: makeHandler)
    }

    /// Starts serving on a socket bound before (so a caller can bind, then do what it must do
    /// only once the port is known to be free, then start with a ready handler).
    public init(
        listener bound: HTTPListener, settings: Settings, gauge: HTTPConnectionGauge = HTTPConnectionGauge(),
        log: (@Sendable (LogEntry) -> Void)? = nil, makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) throws {
        self.settings = settings
        port = bound.port
        let socket = bound.take()
        guard socket >= 0 else { throw HTTPServerError(message: "the listening socket was already handed to a server") }
        let flags = fcntl(socket, F_GETFL)
        guard flags >= 0, fcntl(socket, F_SETFL, flags | O_NONBLOCK) == 0 else {
            close(socket)
            throw HTTPServerError(message: "cannot make the listening socket of \(bound.baseURL) non-blocking: \(String(cString: strerror(errno)))")
        }
        context = HTTPDaemonContext(settings: settings, gauge: gauge, log: log, makeHandler: makeHandler)
        let unmanaged = Unmanaged.passUnretained(context).toOpaque()
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(socket), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: settings.maxConnections + settings.reserveConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, Int(settings.idleTimeout.rounded(.up))), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: settings.maxHeaderBytes, ptr_value: nil),
            MHD_OptionItem(option: .STRICT_FOR_CLIENT, value: 1, ptr_value: nil),
            MHD_OptionItem(option: .LISTEN_BACKLOG_SIZE, value: 4096, ptr_value: nil),
            MHD_OptionItem(option: .URI_LOG_CALLBACK, value: unsafeBitCast(uriLogCallback, to: Int.self), ptr_value: unmanaged),
            MHD_OptionItem(option: .NOTIFY_CONNECTION, value: unsafeBitCast(connectionCallback, to: Int.self), ptr_value: unmanaged),
            MHD_OptionItem(option: .NOTIFY_COMPLETED, value: unsafeBitCast(completedCallback, to: Int.self), ptr_value: unmanaged),
        ]
        var flagBits = MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        if settings.threadPerConnection {
            flagBits |= MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_POLL.rawValue
        } else {
            flagBits |= MHD_USE_EPOLL.rawValue | MHD_USE_TURBO.rawValue
            let threads = settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount
            if threads > 1 { options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: threads, ptr_value: nil)) }
        }
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        context.registry.startWatchdog()
        let started = options.withUnsafeMutableBufferPointer { items in
            cmhd_start_daemon(flagBits, accessCallback, unmanaged, items.baseAddress)
        }
        guard let started else {
            context.registry.stopWatchdog()
            close(socket)
            throw HTTPServerError(message: "cannot start the HTTP server on \(bound.baseURL) (libmicrohttpd refused its options)")
        }
        daemon = UnsafeSendable(started)
    }

    deinit {
        stop()
    }

    /// The base URL, such as `http://127.0.0.1:8080`.
    public var baseURL: String {
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        return "http://\(host):\(port)"
    }

    /// Connections open right now.
    public var openConnections: Int { context.registry.count }

    /// Stops: no new connections, the answer being made finishes, every connection closes.
    public func stop() {
        let (exchanged, _) = stopped.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        guard exchanged else { return }
        context.isStopping.store(true, ordering: .relaxed)
        MHD_stop_daemon(daemon.value)
        context.registry.stopWatchdog()
    }
}

/// Carries a value across threads where a lock or the C library guarantees one thread at a time uses it.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: - libmicrohttpd callbacks (each checks its pointers, and answers "no" rather than crash)

private func daemonContext(_ cls: UnsafeMutableRawPointer?) -> HTTPDaemonContext? {
    cls.map { Unmanaged<HTTPDaemonContext>.fromOpaque($0).takeUnretainedValue() }
}

private func connectionRecord(_ connection: OpaquePointer?) -> HTTPConnectionRecord? {
    guard let connection, let info = cmhd_get_connection_info(connection, .CONNECTION_INFO_SOCKET_CONTEXT),
        let pointer = info.pointee.socket_context
    else { return nil }
    return Unmanaged<HTTPConnectionRecord>.fromOpaque(pointer).takeUnretainedValue()
}

/// libmicrohttpd calls this once the head is in (`*requestContext` still nil), then with each
/// piece of a body, then once more with none: the answer is queued then, because an answer
/// queued at the first call makes it close the connection. Refusals are queued at once (they
/// close the connection anyway, without reading a body).
private let accessCallback: MHD_AccessHandlerCallback = { cls, connection, _, method, version, _, uploadSize, requestContext in
    guard let context = daemonContext(cls), let connection, let method, let version, let requestContext, let uploadSize else { return .NO }
    guard let pointer = requestContext.pointee else {
        let head = HTTPDaemonContext.Head(method: String(cString: method), version: String(cString: version), connection: connection, record: connectionRecord(connection))
        if head.timedOut { return .NO }
        if let refusal = context.refusal(for: head) { return context.send(refusal, for: head, on: connection) }
        requestContext.pointee = Unmanaged.passRetained(head).toOpaque()
        return .YES
    }
    if uploadSize.pointee > 0 {
        uploadSize.pointee = 0  // no route takes a body: discard it
        return .YES
    }
    let head = Unmanaged<HTTPDaemonContext.Head>.fromOpaque(pointer).takeRetainedValue()
    requestContext.pointee = nil
    return context.answer(head, on: connection)
}

private let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    _, uri, connection in
    if let uri, let record = connectionRecord(connection) {
        let target = String(cString: uri)
        record.state.withLock { state in
            state.target = target
            state.answered = false
        }
    }
    return nil
}

private let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let context = daemonContext(cls), let socketContext else { return }
    if code == .CONNECTION_NOTIFY_STARTED {
        guard let connection, let info = cmhd_get_connection_info(connection, .CONNECTION_INFO_CONNECTION_FD) else { return }
        let record = HTTPConnectionRecord(socket: info.pointee.connect_fd, now: HTTPConnectionRegistry.now)
        _ = context.registry.add(record)
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
    } else if let pointer = socketContext.pointee {
        let record = Unmanaged<HTTPConnectionRecord>.fromOpaque(pointer)
        let state = record.takeUnretainedValue().state.withLock { $0 }
        if !state.answered, !state.timedOut, !state.target.isEmpty, let log = context.log {
            // A request libmicrohttpd refused itself (a malformed or oversized head): logged too.
            let status = connection.flatMap { cmhd_get_connection_info($0, .CONNECTION_INFO_HTTP_STATUS) }.map { Int($0.pointee.http_status) } ?? 0
            log(HTTPServer.LogEntry(method: "-", path: state.target, status: status, bytes: 0, seconds: 0))
        }
        context.registry.remove(record.takeUnretainedValue())
        record.release()
        socketContext.pointee = nil
    }
}

private let completedCallback: MHD_RequestCompletedCallback = { _, connection, requestContext, _ in
    if let requestContext, let pointer = requestContext.pointee {
        // A request that ended before its answer (the client went): release its head.
        Unmanaged<HTTPDaemonContext.Head>.fromOpaque(pointer).release()
        requestContext.pointee = nil
    }
    guard let record = connectionRecord(connection) else { return }
    let received = HTTPConnectionRecord.bytesReceived(record.socket) ?? 0
    let now = HTTPConnectionRegistry.now
    record.state.withLock { state in
        state.inRequest = false
        state.waitingSince = now
        state.baselineBytes = received
        state.headSeenAt = nil
    }
}

private let readerCallback: MHD_ContentReaderCallback = { cls, position, buffer, max in
    guard let cls, let buffer else { return cmhd_content_reader_end_with_error() }
    let stream = Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).takeUnretainedValue().stream
    switch stream.read(at: Int(position), into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
    case .bytes(let count) where count > 0: return count
    case .bytes, .abort: return cmhd_content_reader_end_with_error()
    }
}

private let readerFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).release()
}

/// Owns a body stream while libmicrohttpd sends it.
final class HTTPBodyStreamBox {
    let stream: any HTTPBodyStream
    init(_ stream: any HTTPBodyStream) { self.stream = stream }
}

// MARK: - The shared state the callbacks reach

/// What every callback of one daemon shares. Handlers are lent one per request from a pool
/// (a handler is used by one thread at a time: `handlers` is only touched under its mutex).
final class HTTPDaemonContext: Sendable {
    let settings: HTTPServer.Settings
    let registry: HTTPConnectionRegistry
    let log: (@Sendable (HTTPServer.LogEntry) -> Void)?
    private let makeHandler: @Sendable () -> any HTTPRequestHandler
    private let handlers = Mutex<[UnsafeSendable<any HTTPRequestHandler>]>([])
    let isStopping = Atomic<Bool>(false)

    init(
        settings: HTTPServer.Settings, gauge: HTTPConnectionGauge, log: (@Sendable (HTTPServer.LogEntry) -> Void)?,
        makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) {
        self.settings = settings
        self.log = log
        self.makeHandler = makeHandler
        registry = HTTPConnectionRegistry(headTimeout: settings.readTimeout, gauge: gauge) { target in
            log?(HTTPServer.LogEntry(method: "-", path: target, status: 408, bytes: 18, seconds: settings.readTimeout))
        }
    }

    /// A request head as libmicrohttpd parsed it, kept from its first call to its answer in the
    /// request's context pointer. Not `Sendable`, and needs not be: libmicrohttpd runs all the
    /// callbacks of one connection on the same thread.
    final class Head {
        let method: String
        let version: String
        let target: String
        let headers: [(name: String, value: String)]
        let started = HTTPConnectionRegistry.now
        let record: HTTPConnectionRecord?
        /// The head deadline's watchdog answered 408 on this connection already.
        let timedOut: Bool

        init(method: String, version: String, connection: OpaquePointer, record: HTTPConnectionRecord?) {
            self.method = method
            self.version = version
            self.record = record
            var target = ""
            var timedOut = false
            record?.state.withLock { state in
                target = state.target
                timedOut = state.timedOut
                state.inRequest = true
            }
            self.target = target
            self.timedOut = timedOut
            headers = HTTPDaemonContext.headers(of: connection)
        }
    }

    /// What the HTTP layer refuses before any route: an unsupported version (505), a message
    /// that cannot be framed safely (400), a missing or repeated Host (400), a Host not on the
    /// allow-list (421), a body over 1 MiB (413), a connection past `maxConnections` (503).
    /// Each closes the connection.
    func refusal(for head: Head) -> HTTPServerResponse? {
        guard head.version == "HTTP/1.1" || head.version == "HTTP/1.0" else {
            return Self.refusal(505, "HTTP version \(head.version) is not supported (HTTP/1.1 is)\n")
        }
        if let problem = Self.framingProblem(head.headers) { return Self.refusal(400, problem) }
        let hosts = head.headers.filter { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Host") }
        guard hosts.count <= 1, head.version == "HTTP/1.0" || hosts.count == 1 else {
            return Self.refusal(400, "a request needs exactly one Host header\n")
        }
        if let policy = settings.hostPolicy {
            guard let host = hosts.first?.value, policy.allows(host) else {
                return Self.refusal(421, "this server does not answer for host \(hosts.first?.value ?? "(none)")\n")
            }
        }
        let length = head.headers.first { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Content-Length") }.flatMap { Int($0.value) }
        if let length, length > 1 << 20 { return Self.refusal(413, "request body too large\n") }
        if registry.count > settings.maxConnections || isStopping.load(ordering: .relaxed) {
            var busy = Self.refusal(503, "server busy\n")
            busy.headers.append(("Retry-After", "1"))
            return busy
        }
        return nil
    }

    /// Answers a request whose head (and body, if any) is in.
    func answer(_ head: Head, on connection: OpaquePointer) -> MHD_Result {
        guard let request = HTTPServerRequest(method: head.method, target: head.target, version: head.version, headers: head.headers) else {
            return send(Self.refusal(400, "malformed request target\n"), for: head, on: connection)
        }
        let handler = handlers.withLock { $0.popLast() }?.value ?? makeHandler()
        let response = handler.respond(to: request)
        handlers.withLock { $0.append(UnsafeSendable(handler)) }
        return send(response, for: head, on: connection)
    }

    /// Queues an answer and logs it.
    func send(_ response: HTTPServerResponse, for head: Head, on connection: OpaquePointer) -> MHD_Result {
        let result = queue(response, on: connection, method: head.method)
        head.record?.state.withLock { $0.answered = true }
        if let log {
            let seconds = Double(HTTPConnectionRegistry.now - head.started) / 1e9
            log(HTTPServer.LogEntry(
                method: head.method, path: head.target, status: response.status, bytes: head.method == "HEAD" ? 0 : response.bodyLength, seconds: seconds))
        }
        return result
    }

    /// RFC 9112 §6.3: a message with both `Content-Length` and `Transfer-Encoding`, or with
    /// differing lengths, cannot be framed safely (request smuggling): 400, and close.
    static func framingProblem(_ headers: [(name: String, value: String)]) -> String? {
        let lengths = headers.filter { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Content-Length") }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let hasTransferEncoding = headers.contains { HTTPServerRequest.equalIgnoringASCIICase($0.name, "Transfer-Encoding") }
        if hasTransferEncoding, !lengths.isEmpty { return "both Content-Length and Transfer-Encoding\n" }
        if hasTransferEncoding { return "request bodies (Transfer-Encoding) are not accepted\n" }
        guard lengths.allSatisfy({ !$0.isEmpty && $0.count <= 18 && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else {
            return "malformed Content-Length\n"
        }
        if Set(lengths).count > 1 { return "conflicting Content-Length values\n" }
        return nil
    }

    private static func refusal(_ status: Int, _ text: String) -> HTTPServerResponse {
        HTTPServerResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8), closesConnection: true)
    }

    static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        final class Collected { var headers: [(name: String, value: String)] = [] }
        let collected = Collected()
        collected.headers.reserveCapacity(12)
        withExtendedLifetime(collected) {
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
                guard let cls, let key else { return .NO }
                let collected = Unmanaged<Collected>.fromOpaque(cls).takeUnretainedValue()
                collected.headers.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.headers
    }

    /// Builds libmicrohttpd's response and queues it; a header it refuses (a line break in a
    /// value) turns the answer into a 500 rather than a half-made response.
    private func queue(_ response: HTTPServerResponse, on connection: OpaquePointer, method: String) -> MHD_Result {
        if response.dropsConnection { return .NO }
        let made: OpaquePointer?
        switch response.body {
        case .data(let data):
            made = data.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .stream(let length, let stream):
            let box = Unmanaged.passRetained(HTTPBodyStreamBox(stream)).toOpaque()
            made = MHD_create_response_from_callback(UInt64(length), 64 << 10, readerCallback, box, readerFreeCallback)
            if made == nil { Unmanaged<HTTPBodyStreamBox>.fromOpaque(box).release() }
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        for (name, value) in response.headers where !HTTPServerRequest.equalIgnoringASCIICase(name, "Content-Length") {
            guard MHD_add_response_header(made, name, value) == .YES else {
                return queue(HTTPServerResponse(status: 500, body: Data("bad response header \(name)\n".utf8)), on: connection, method: method)
            }
        }
        if response.closesConnection || isStopping.load(ordering: .relaxed) {
            // Without the header the connection would stay open: close it without an answer.
            guard MHD_add_response_header(made, "Connection", "close") == .YES else { return .NO }
        }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }
}
