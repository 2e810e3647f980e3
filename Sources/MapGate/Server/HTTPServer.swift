import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Handles the requests of one connection at a time. A server keeps a pool of handlers and
/// lends each to one connection, so a handler may own resources such as a SQLite connection.
public protocol HTTPRequestHandler: AnyObject {
    func respond(to request: HTTPServerRequest, with writer: HTTPResponseWriter)
}

/// An error starting a server.
public struct HTTPServerError: MapGateFailure, LocalizedError, Sendable {
    public let message: String
    public var kind: FailureKind { .io }
    public var errorDescription: String? { message }
}

/// A small HTTP/1.1 server over POSIX sockets: keep-alive, pipelining, limits on request size,
/// read and idle timeouts, at most `maxConnections` connections open at once (one thread each,
/// with at most two requests per core being answered at a time), and a clean stop that lets
/// requests in flight finish.
public final class HTTPServer: Sendable {
    public struct Settings: Sendable {
        public var host: String = "127.0.0.1"
        /// 0 picks a free port.
        public var port: UInt16 = 0
        public var maxConnections: Int = 256
        public var maxHeaderBytes: Int = 16 << 10
        /// Seconds a client has to finish a request it started.
        public var readTimeout: Double = 10
        /// Seconds a keep-alive connection may sit idle between requests.
        public var idleTimeout: Double = 30
        public init() {}
    }

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
    private let listener: Int32
    private let makeHandler: @Sendable () -> any HTTPRequestHandler
    private let log: (@Sendable (LogEntry) -> Void)?
    private let state = Mutex(ServerState())
    private let finished = DispatchGroup()
    /// At most two requests per core are being answered at once; the other connections wait
    /// their turn here instead of crowding the run queue (which mostly hurts tail latency).
    private let processing = DispatchSemaphore(value: max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))

    /// Read on every request by every worker: an atomic, not the mutex.
    private let stopping = Atomic<Bool>(false)

    private struct ServerState: ~Copyable {
        var active = 0
        /// Handlers not lent to a connection right now. Only touched under the mutex.
        var idleHandlers: [UnsafeSendable<any HTTPRequestHandler>] = []
    }

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
        listener bound: HTTPListener, settings: Settings, log: (@Sendable (LogEntry) -> Void)? = nil,
        makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) {
        self.settings = settings
        self.makeHandler = makeHandler
        self.log = log
        (listener, port) = (bound.take(), bound.port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "http-accept"
        finished.enter()
        thread.start()
    }

    deinit {
        close(listener)
    }

    /// The base URL, such as `http://127.0.0.1:8080`.
    public var baseURL: String {
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, lets requests in flight finish, closes idle connections, and waits.
    public func stop() {
        let (exchanged, _) = stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        if exchanged { shutdown(listener, Int32(SHUT_RDWR)) }
        finished.wait()
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) }

    private func acceptLoop() {
        defer { finished.leave() }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if isStopping { return }
                if errno == EMFILE || errno == ENFILE { usleep(10_000); continue }
                return
            }
            let stoppingNow = isStopping
            let admitted = state.withLock { state -> Bool in
                guard !stoppingNow, state.active < settings.maxConnections else { return false }
                state.active += 1
                return true
            }
            guard admitted else {
                let busy = HTTPResponseWriter(socket: client)
                busy.keepAlive = false
                busy.respond(status: 503, headers: [("Retry-After", "1")], body: Data("server busy\n".utf8))
                close(client)
                continue
            }
            var noDelay: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            // Reads wake up at least every 250 ms to check timeouts and a stopping server.
            var slice = timeval(tv_sec: 0, tv_usec: 250_000)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &slice, socklen_t(MemoryLayout<timeval>.size))
            finished.enter()
            let thread = Thread { [self] in
                serve(client)
                finished.leave()
            }
            thread.stackSize = 512 << 10
            thread.start()
        }
    }

    private func borrowHandler() -> any HTTPRequestHandler {
        if let handler = state.withLock({ $0.idleHandlers.popLast() }) { return handler.value }
        return makeHandler()
    }

    private func serve(_ client: Int32) {
        let handler = borrowHandler()
        let connection = HTTPConnection(socket: client, settings: settings) { [self] in isStopping }
        connection.run { request, writer in
            processing.wait()
            defer { processing.signal() }
            let started = DispatchTime.now().uptimeNanoseconds
            handler.respond(to: request, with: writer)
            if let log {
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                log(LogEntry(method: request.method, path: request.target, status: writer.status, bytes: writer.bytesWritten, seconds: seconds))
            }
        }
        close(client)
        state.withLock { state in
            state.active -= 1
            state.idleHandlers.append(UnsafeSendable(handler))
        }
    }
}

/// Carries a value across threads where a lock guarantees one thread at a time uses it.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
