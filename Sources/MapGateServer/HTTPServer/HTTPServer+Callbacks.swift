import CMicroHTTPD
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// MARK: - libmicrohttpd callbacks (each checks its pointers, and answers "no" rather than crash)

func daemonContext(_ cls: UnsafeMutableRawPointer?) -> HTTPDaemonContext? {
    cls.map { Unmanaged<HTTPDaemonContext>.fromOpaque($0).takeUnretainedValue() }
}

func connectionRecord(_ connection: OpaquePointer?) -> HTTPConnectionRecord? {
    guard let connection, let info = cmhd_get_connection_info(connection, .CONNECTION_INFO_SOCKET_CONTEXT),
        let pointer = info.pointee.socket_context
    else { return nil }
    return Unmanaged<HTTPConnectionRecord>.fromOpaque(pointer).takeUnretainedValue()
}

/// libmicrohttpd calls this once the head is in (`*requestContext` still nil), then with each
/// piece of a body, then once more with none: the answer is queued then, because an answer
/// queued at the first call makes it close the connection. Refusals are queued at once (they
/// close the connection anyway, without reading a body).
let accessCallback: MHD_AccessHandlerCallback = { cls, connection, _, method, version, _, uploadSize, requestContext in
    guard let context = daemonContext(cls), let connection, let method, let version, let requestContext, let uploadSize else { return .NO }
    guard let pointer = requestContext.pointee else {
        let sink = MicroHTTPDConnection(connection)
        let head = HTTPDaemonContext.Head(method: String(cString: method), version: String(cString: version), headers: sink.headers(), record: connectionRecord(connection))
        if head.timedOut { return .NO }
        if let refusal = context.refusal(for: head) { return context.send(refusal, for: head, on: sink) ? .YES : .NO }
        requestContext.pointee = Unmanaged.passRetained(head).toOpaque()
        return .YES
    }
    if uploadSize.pointee > 0 {
        uploadSize.pointee = 0  // no route takes a body: discard it
        return .YES
    }
    let head = Unmanaged<HTTPDaemonContext.Head>.fromOpaque(pointer).takeRetainedValue()
    requestContext.pointee = nil
    return context.answer(head, on: MicroHTTPDConnection(connection)) ? .YES : .NO
}

let uriLogCallback: cmhd_uri_log_callback = {
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

let connectionCallback: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let context = daemonContext(cls), let socketContext else { return }
    if code == .CONNECTION_NOTIFY_STARTED {
        guard let connection, let info = cmhd_get_connection_info(connection, .CONNECTION_INFO_CONNECTION_FD) else { return }
        socketContext.pointee = Unmanaged.passRetained(context.opened(socket: info.pointee.connect_fd)).toOpaque()
    } else if let pointer = socketContext.pointee {
        let record = Unmanaged<HTTPConnectionRecord>.fromOpaque(pointer)
        // A request libmicrohttpd refused itself (a malformed or oversized head) is logged with its status.
        context.closed(record.takeUnretainedValue()) {
            connection.flatMap { cmhd_get_connection_info($0, .CONNECTION_INFO_HTTP_STATUS) }.map { Int($0.pointee.http_status) } ?? 0
        }
        record.release()
        socketContext.pointee = nil
    }
}

let completedCallback: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    if let requestContext, let pointer = requestContext.pointee {
        // A request that ended before its answer (the client went): release its head.
        Unmanaged<HTTPDaemonContext.Head>.fromOpaque(pointer).release()
        requestContext.pointee = nil
    }
    guard let record = connectionRecord(connection) else { return }
    daemonContext(cls)?.completed(record)
}

let readerCallback: MHD_ContentReaderCallback = { cls, position, buffer, max in
    guard let cls, let buffer else { return cmhd_content_reader_end_with_error() }
    let stream = Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).takeUnretainedValue().stream
    switch stream.read(at: Int(position), into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
    case .bytes(let count) where count > 0: return count
    case .bytes, .abort: return cmhd_content_reader_end_with_error()
    }
}

let readerFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<HTTPBodyStreamBox>.fromOpaque(cls).release()
}

/// Owns a body stream while libmicrohttpd sends it.
final class HTTPBodyStreamBox {
    let stream: any HTTPBodyStream
    init(_ stream: any HTTPBodyStream) { self.stream = stream }
}

let bodyFreeCallback: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<HTTPBodyBox>.fromOpaque(cls).release()
}

/// Owns a body's bytes while libmicrohttpd sends them, and gives its share of the budget back
/// once it is done (the client took it, or the connection closed).
final class HTTPBodyBox {
    let bytes: HTTPBodyBytes
    private let budget: HTTPBodyBudget?

    /// - Parameter budget: the budget `bytes.count` was reserved from; nil for a shared body.
    init(_ bytes: HTTPBodyBytes, budget: HTTPBodyBudget?) {
        self.bytes = bytes
        self.budget = budget
    }

    deinit { budget?.release(bytes.count) }
}
