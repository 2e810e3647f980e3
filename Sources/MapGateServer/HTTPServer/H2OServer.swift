import CH2O
import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// h2o's event loops serving one listening socket (``HTTPServer/HTTPLibrary/h2o``), one loop per
/// thread, answering through an ``HTTPDaemonContext`` as libmicrohttpd's daemons do. The glue in
/// `Sources/CH2O` runs the loops; this type starts and stops them and turns their callbacks into
/// the context's calls.
final class H2OServer: @unchecked Sendable {
    private let server: OpaquePointer
    private let socket: Int32

    private init(server: OpaquePointer, socket: Int32) {
        self.server = server
        self.socket = socket
    }

    /// h2o's own timer (idle keep-alive and head), far out: it follows the wall clock (a clock set
    /// forward would close every connection at once; the tests' sped-up clocks did), so the
    /// watchdog closes connections that stand still, on the monotonic clock
    /// (``HTTPConnectionRegistry/stillTimeout``), and this is a backstop only. Ten years.
    private static let backstopSeconds: Int32 = 315_360_000

    /// Starts the loops on `listener`'s socket (taken: closed on failure, and at ``stop()``).
    static func start(on listener: HTTPListener, settings: HTTPServer.Settings, context: HTTPDaemonContext) throws -> H2OServer {
        let socket = try HTTPServer.takeNonBlocking(listener)
        let callbacks = ch2o_callbacks(
            cls: Unmanaged.passUnretained(context).toOpaque(), opened: h2oOpened, request: h2oRequest, completed: h2oCompleted, closed: h2oClosed,
            refused: h2oRefused)
        let threads = settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount
        var error = [CChar](repeating: 0, count: 256)
        guard let server = ch2o_start(socket, Int32(threads), Self.backstopSeconds, callbacks, &error, error.count) else {
            close(socket)
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw HTTPServerError(message: L.localized("cannot start the HTTP server on %1$s: %2$s", "\(listener.baseURL)", reason))
        }
        return H2OServer(server: server, socket: socket)
    }

    /// No new connection (the socket stays open and listening): the loops close their duplicates
    /// of it, and the connections they took go on until ``stop()``. For a server that hands a
    /// shared socket back (``HTTPServer/stop()``).
    func quiesce() {
        ch2o_quiesce(server)
    }

    /// Stops the loops (every connection closed), then closes the listening socket (never shut
    /// down: a shared one goes on listening for its holder).
    func stop() {
        ch2o_stop(server)
        close(socket)
    }
}

// MARK: - The glue's callbacks (on the connection's loop thread)

private let h2oOpened: @convention(c) (UnsafeMutableRawPointer?, Int32) -> UnsafeMutableRawPointer? = { cls, socket in
    guard let context = daemonContext(cls) else { return nil }
    // As libmicrohttpd's CONNECTION_LIMIT: past the admitted and the reserve, none is taken.
    guard context.registry.count < context.settings.maxConnections + context.settings.reserveConnections else { return nil }
    return Unmanaged.passRetained(context.opened(socket: socket)).toOpaque()
}

private let h2oRequest: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, OpaquePointer?) -> Void = { cls, connection, request in
    guard let request else { return }
    guard let context = daemonContext(cls), let connection else { return ch2o_drop(request) }
    let record = Unmanaged<HTTPConnectionRecord>.fromOpaque(connection).takeUnretainedValue()
    let sink = H2ORequest(request)
    let head = HTTPDaemonContext.Head(method: sink.method, version: sink.version, target: sink.target, headers: sink.headers(), record: record)
    if head.timedOut { return ch2o_drop(request) }
    if let refusal = context.refusal(for: head) {
        _ = context.send(refusal, for: head, on: sink)
    } else {
        _ = context.answer(head, on: sink)
    }
}

private let h2oCompleted: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int, UInt64) -> Void = { cls, connection, pending, received in
    guard let context = daemonContext(cls), let connection else { return }
    context.completed(Unmanaged<HTTPConnectionRecord>.fromOpaque(connection).takeUnretainedValue(), pendingBytes: pending, received: received)
}

/// A head the glue refused before the HTTP layer saw it (400, 505, 414, 431): its target and status
/// are noted, and logged when the connection closes.
private let h2oRefused: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int) -> Void = {
    _, connection, status, target, length in
    guard let connection, let target else { return }
    let text = String(decoding: UnsafeRawBufferPointer(start: target, count: length), as: UTF8.self)
    Unmanaged<HTTPConnectionRecord>.fromOpaque(connection).takeUnretainedValue().state.withLock { state in
        state.target = text
        state.answered = false
        state.refusedWith = Int(status)
    }
}

private let h2oClosed: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { cls, connection in
    guard let connection else { return }
    let record = Unmanaged<HTTPConnectionRecord>.fromOpaque(connection)
    daemonContext(cls)?.closed(record.takeUnretainedValue()) { record.takeUnretainedValue().state.withLock { $0.refusedWith } }
    record.release()
}

/// One request h2o read, and where its answer goes (exactly once: an answer, or the connection
/// dropped).
struct H2ORequest: HTTPAnswerSink {
    let request: OpaquePointer

    init(_ request: OpaquePointer) { self.request = request }

    private static func text(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    var method: String {
        var length = 0
        let pointer = ch2o_request_method(request, &length)
        return Self.text(pointer, length)
    }

    /// The target as sent.
    var target: String {
        var length = 0
        let pointer = ch2o_request_target(request, &length)
        return Self.text(pointer, length)
    }

    /// `HTTP/1.1`, or whatever version the request line named.
    var version: String {
        let version = ch2o_request_version(request)
        return "HTTP/\(version >> 8).\(version & 0xFF)"
    }

    /// Every header field as sent, in order.
    func headers() -> [(name: String, value: String)] {
        var fields: UnsafePointer<ch2o_header>?
        let count = ch2o_request_headers(request, &fields)
        guard let fields, count > 0 else { return [] }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(count)
        for index in 0..<count {
            let field = fields[index]
            headers.append((Self.text(field.name, field.name_length), Self.text(field.value, field.value_length)))
        }
        return headers
    }

    func queue(_ response: HTTPServerResponse, body: HTTPBodyBox?, method: String, closing: Bool) -> Bool {
        if response.dropsConnection {
            ch2o_drop(request)
            return false
        }
        let close: Int32 = closing ? 1 : 0
        // A prepared answer (a cached tile) as it is: its fields checked once, its body sent
        // from where it lies, held by the prepared answer itself until h2o is done.
        if case .prepared(let prepared) = response.body, response.status == prepared.status, response.status != 304, method != "HEAD",
            prepared.sendsAsIs
        {
            let held = Unmanaged.passRetained(prepared).toOpaque()
            H2OHeaderFields.with(prepared.headers) { fields, count in
                ch2o_respond(
                    request, Int32(prepared.status), fields, count, UInt64(prepared.body.count), prepared.body.bytes.baseAddress, prepared.body.count,
                    h2oReleasePrepared, held, close)
            }
            return true
        }
        guard HTTPServerResponse.canSend(response.headers) else {
            let failure = Data("bad response header\n".utf8)
            return queue(HTTPServerResponse(status: 500, body: failure), body: HTTPBodyBox(HTTPBodyBytes(failure), budget: nil), method: method, closing: closing)
        }
        if response.status == 304 || method == "HEAD" {
            // No body: a 304 carries the representation's length, a HEAD the body's.
            let length = response.status == 304 ? response.header("Content-Length").flatMap { UInt64($0) } ?? 0 : UInt64(response.bodyLength)
            H2OHeaderFields.with(response.headers) { ch2o_respond(request, Int32(response.status), $0, $1, length, nil, 0, nil, nil, close) }
            return true
        }
        switch response.body {
        case .stream(let length, let stream):
            let box = Unmanaged.passRetained(HTTPBodyStreamBox(stream)).toOpaque()
            H2OHeaderFields.with(response.headers) {
                ch2o_respond_stream(request, Int32(response.status), $0, $1, UInt64(length), h2oRead, h2oReleaseStream, box, close)
            }
        case .data, .shared, .prepared:
            var owned = body
            if owned == nil, case .prepared(let prepared) = response.body { owned = HTTPBodyBox(prepared.body, budget: nil) }
            guard let owned else {
                ch2o_drop(request)
                return false
            }
            let box = Unmanaged.passRetained(owned)
            H2OHeaderFields.with(response.headers) {
                ch2o_respond(
                    request, Int32(response.status), $0, $1, UInt64(owned.bytes.count), owned.bytes.bytes.baseAddress, owned.bytes.count, h2oReleaseBody,
                    box.toOpaque(), close)
            }
        }
        return true
    }
}

private let h2oReleasePrepared: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
    guard let cls else { return }
    Unmanaged<HTTPPreparedResponse>.fromOpaque(cls).release()
}

private let h2oReleaseBody: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
    guard let cls else { return }
    Unmanaged<HTTPBodyBox>.fromOpaque(cls).release()
}

private let h2oReleaseStream: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
    guard let cls else { return }
    Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).release()
}

private let h2oRead: @convention(c) (UnsafeMutableRawPointer?, UInt64, UnsafeMutableRawPointer?, Int) -> Int = { cls, offset, buffer, max in
    guard let cls, let buffer else { return -1 }
    let stream = Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).takeUnretainedValue().stream
    switch stream.read(at: Int(offset), into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
    case .bytes(let count) where count > 0: return count
    case .bytes, .abort: return -1
    }
}
