import CLinux
import CMicroHTTPD
import FoundationEssentials
import MapGateBase
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An error starting a server.
public struct HTTPServerError: MapGateFailure, LocalizedError, Sendable {
    public let message: String
    /// `.io` (the socket), or `.unavailable` when libmicrohttpd cannot be loaded or the port is
    /// another program's.
    public let kind: FailureKind
    public var errorDescription: String? { message }

    init(message: String, kind: FailureKind = .io) {
        self.message = message
        self.kind = kind
    }
}

/// The HTTP layer: libmicrohttpd (or h2o, ``Settings/library``) parses requests and runs
/// connections (keep-alive, pipelining, timeouts, limits); this type adds what it lacks — a total deadline for a request head (408),
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
        /// Connections served at once for one client not on this machine (an address of the LAN
        /// with `--host 0.0.0.0`); past it that client gets 503. Loopback clients are not limited.
        public var maxConnectionsPerClient: Int = 256
        /// Memory per connection for its request head and buffers. libmicrohttpd zeroes the whole
        /// of it after each request, so every idle keep-alive connection holds all of it: 8 KiB
        /// keeps 10,000 idle connections under 128 MB (16 KiB took 198 MB). The answer's head is
        /// built in it too, so heads are refused (414, 431) while they leave room for it:
        /// ``HTTPDaemonContext/headTooLarge(_:)`` (about 3.2 KB of fields, or a 6.5 KB target).
        public var maxHeaderBytes: Int = 8 << 10
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
        /// Bytes that answers made for their request may hold in total until their clients take
        /// them (``HTTPBodyBudget``); past it an answer is 503 with `Retry-After`.
        public var maxUnsentBodyBytes: Int = 128 << 20
        /// Hosts answered; nil answers any `Host` (the test origin).
        public var hostPolicy: HTTPHostPolicy?
        /// Seconds a connection must have been idle before it may be closed to make room for a
        /// new one once `maxConnections` are open; nil: half of `idleTimeout`.
        public var evictableAfter: Double?
        /// The library that runs the connections. A server that runs a thread per connection (the
        /// test origin) uses libmicrohttpd whatever this says.
        public var library: HTTPLibrary = .configured
        public init() {}
    }

    /// The C library under the HTTP layer.
    public enum HTTPLibrary: String, Sendable, CaseIterable {
        /// libmicrohttpd: a thread per connection (the test origin), and the suites that serve over
        /// HTTP run on it too (`Tests/http-suites`); the benchmarks' baseline.
        case microhttpd
        /// h2o's event loop, whose idle connection holds about 1 KB where libmicrohttpd's holds
        /// its whole 8 KiB pool (issue 42, item 2): docs/decisions/libmicrohttpd-vs-h2o.md.
        case h2o

        /// h2o. The tests' and the benchmarks' builds (not the shipped one) take
        /// `MAPGATE_HTTP_LIBRARY=microhttpd` from the environment, for every server of the process
        /// and of the commands it runs.
        public static let configured: HTTPLibrary = {
            #if DEBUG || MAPGATE_BENCHMARK
            if let name = ProcessInfo.processInfo.environment["MAPGATE_HTTP_LIBRARY"], let library = HTTPLibrary(rawValue: name) { return library }
            #endif
            return .h2o
        }()
    }

    /// One answer, rejections included, for the access log and metrics.
    public struct LogEntry: Sendable {
        public var method: String
        public var path: String
        public var status: Int
        public var bytes: Int
        public var seconds: Double
        /// The answer's ``HTTPServerResponse/label``; nil for what the HTTP layer refused itself.
        public var label: String? = nil
    }

    public let settings: Settings
    /// The port actually bound (useful when `settings.port` is 0).
    public let port: UInt16
    private let context: HTTPDaemonContext
    /// One libmicrohttpd server per listening socket, all answering through ``context``.
    private let daemons: [Daemon]
    private let stopped = Atomic<Bool>(false)

    private struct Daemon: @unchecked Sendable {
        /// libmicrohttpd's daemon; nil when h2o serves the socket.
        let pointer: OpaquePointer?
        /// h2o's loops serving the socket.
        var h2o: H2OServer? = nil
        /// Serving a shared listening socket (``HTTPListener/isShared``): handed back at stop.
        let handsBack: Bool

        func stop() {
            if let pointer { cmhd_stop_daemon(pointer) }
            h2o?.stop()
        }
    }

    /// Binds `settings.host:settings.port` and starts serving.
    public convenience init(
        settings: Settings, log: (@Sendable (LogEntry) -> Void)? = nil,
        makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) throws {
        try self.init(listener: HTTPListener(host: settings.host, port: settings.port), settings: settings, log: log, makeHandler: makeHandler)
    }

    /// Starts serving on a socket bound before (so a caller can bind, then do what it must do
    /// only once the port is known to be free, then start with a ready handler), and on the
    /// sockets of `others` too, answered alike (system mode's tile port on `[::1]` beside
    /// 127.0.0.1): one count of admitted connections for them all (`maxConnections`; each socket's
    /// libmicrohttpd also refuses past `maxConnections + reserveConnections` of its own), ``port``
    /// and ``baseURL`` the first's.
    public init(
        listener bound: HTTPListener, alsoOn others: [HTTPListener] = [], settings: Settings, gauge: HTTPConnectionGauge = HTTPConnectionGauge(),
        log: (@Sendable (LogEntry) -> Void)? = nil, makeHandler: @escaping @Sendable () -> any HTTPRequestHandler
    ) throws {
        // The library that serves: the watchdog's work depends on it too (found when h2o became
        // the default: the test origin, on libmicrohttpd for its thread per connection, had its
        // stalls cut by the watchdog's closing of still connections, which is h2o's alone).
        var settings = settings
        settings.library = Self.library(for: settings)
        self.settings = settings
        port = bound.port
        // The library is opened here, the first time a server starts (it is not linked).
        do { try (settings.library == .h2o ? SharedLibrary.h2o : SharedLibrary.microhttpd).load() } catch {
            throw HTTPServerError(message: L.localized("cannot start the HTTP server on %1$s: %2$s", "\(bound.baseURL)", "\(error.errorDescription ?? "")"), kind: .unavailable)
        }
        // Bodies of a few hundred KB and more are mapped and given back to the system when their
        // answer is done (a fixed threshold: glibc's moving one kept freed 8 MB tiles in the heap,
        // and the process kept its peak size after the clients went). Process-wide.
        _ = clinux_set_mmap_threshold(256 << 10)
        context = HTTPDaemonContext(settings: settings, gauge: gauge, log: log, makeHandler: makeHandler)
        try context.registry.startWatchdog()
        var started: [Daemon] = []
        do {
            for listener in [bound] + others {
                if settings.library == .h2o {
                    try SharedLibrary.h2o.load()
                    let handsBack = listener.isShared
                    started.append(Daemon(pointer: nil, h2o: try H2OServer.start(on: listener, settings: settings, context: context), handsBack: handsBack))
                } else {
                    try SharedLibrary.microhttpd.load()
                    started.append(try Self.startDaemon(on: listener, settings: settings, context: context))
                }
            }
        } catch {
            for daemon in started { daemon.stop() }
            context.registry.stopWatchdog()
            throw error
        }
        daemons = started
    }

    /// The library that serves: h2o when asked for, unless each connection gets a thread
    /// (libmicrohttpd's alone).
    private static func library(for settings: Settings) -> HTTPLibrary {
        settings.library == .h2o && !settings.threadPerConnection ? .h2o : .microhttpd
    }

    /// `listener`'s socket, taken from it and made non-blocking (closed when it cannot be), for
    /// the library that serves it.
    static func takeNonBlocking(_ listener: HTTPListener) throws -> Int32 {
        let socket = listener.take()
        guard socket >= 0 else { throw HTTPServerError(message: L.localized("the listening socket was already handed to a server")) }
        let flags = fcntl(socket, F_GETFL)
        guard flags >= 0, fcntl(socket, F_SETFL, flags | O_NONBLOCK) == 0 else {
            close(socket)
            throw HTTPServerError(message: L.localized("cannot make the listening socket of %1$s non-blocking: %2$s", "\(listener.baseURL)", "\(SystemErrorReason.text(errno))"))
        }
        return socket
    }

    /// Starts libmicrohttpd on `listener`'s socket (taken: closed on failure).
    private static func startDaemon(on listener: HTTPListener, settings: Settings, context: HTTPDaemonContext) throws -> Daemon {
        let handsBack = listener.isShared
        let socket = try takeNonBlocking(listener)
        let unmanaged = Unmanaged.passUnretained(context).toOpaque()
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(socket), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: settings.maxConnections + settings.reserveConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, Int(settings.idleTimeout.rounded(.up))), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: settings.maxHeaderBytes, ptr_value: nil),
            // Not 1: libmicrohttpd 0.9.75 sends the status line and headers of its own error
            // answers twice, so a missing Host is refused by ``HTTPDaemonContext/refusal(for:)``
            // instead (once), and a target with a space too.
            MHD_OptionItem(option: .STRICT_FOR_CLIENT, value: 0, ptr_value: nil),
            MHD_OptionItem(option: .LISTEN_BACKLOG_SIZE, value: 4096, ptr_value: nil),
        ]
        var flagBits = MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        // A socket shared with its holder (system mode's tile port, held between sessions:
        // ``HTTPListener/duplicate()``) must survive the server: it is handed back with
        // MHD_quiesce_daemon, which needs ITC (else libmicrohttpd shuts the socket down at stop).
        // With epoll, libmicrohttpd 0.9.75 aborts when quiescing races a worker that takes the
        // socket out of its epoll set (found by an attack: 1,306 sessions under load crashed the
        // service), so such a server polls.
        if handsBack { flagBits |= MHD_USE_ITC.rawValue }
        if settings.threadPerConnection {
            flagBits |= MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_POLL.rawValue
        } else {
            flagBits |= handsBack ? MHD_USE_POLL.rawValue : MHD_USE_EPOLL.rawValue | MHD_USE_TURBO.rawValue
            let threads = settings.threads > 0 ? settings.threads : ProcessInfo.processInfo.activeProcessorCount
            if threads > 1 { options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: threads, ptr_value: nil)) }
        }
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        let started = options.withUnsafeMutableBufferPointer { items in
            cmhd_start_daemon(
                flagBits, accessCallback, uriLogCallback, connectionCallback, completedCallback, unmanaged, items.baseAddress)
        }
        guard let started else {
            close(socket)
            throw HTTPServerError(message: L.localized("cannot start the HTTP server on %1$s (libmicrohttpd refused its options)", "\(listener.baseURL)"))
        }
        return Daemon(pointer: started, handsBack: handsBack)
    }

    deinit {
        stop()
    }

    /// The base URL, such as `http://127.0.0.1:8080`.
    public var baseURL: String {
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        return "http://\(host):\(port)"
    }

    #if DEBUG
    /// Connections open right now. For the tests: debug builds only.
    public var openConnections: Int { context.registry.count }
    #endif

    /// Drops the handlers waiting in the pool (new ones are made as requests come): what they hold
    /// open goes with them. Handlers answering now are not touched.
    public func discardIdleHandlers() {
        context.discardIdleHandlers()
    }

    /// How long a server that hands its socket back waits, at most, for the requests under way
    /// on the connections it took (``stop()``).
    static let handBackGrace = 1.0

    /// Stops: no new connections, the answer being made finishes, every connection closes.
    ///
    /// A server on a shared socket (system mode's tile port, where the next server takes over)
    /// first stops taking connections, then waits up to ``handBackGrace`` for the requests under
    /// way on those it took, each answered as usual and its connection closed after, before it
    /// closes the idle ones: a client it had accepted got an empty reply at the switch between a
    /// session's server and the closed door (found by an attack).
    public func stop() {
        let (exchanged, _) = stopped.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        guard exchanged else { return }
        // A shared listening socket is taken back first and closed here: libmicrohttpd would shut
        // it down, and its holder (``HTTPListener/duplicate()``) goes on with it.
        let sharing = daemons.filter(\.handsBack)
        if !sharing.isEmpty {
            context.isDraining.store(true, ordering: .relaxed)
            for daemon in sharing {
                daemon.h2o?.quiesce()
                guard let pointer = daemon.pointer else { continue }
                let listening = cmhd_quiesce_daemon(pointer)
                if listening >= 0 { close(listening) }
            }
            let deadline = MonotonicClock.seconds + Self.handBackGrace
            while context.registry.hasRequestUnderWay(freshWithin: 0.2), MonotonicClock.seconds < deadline { usleep(5_000) }
        }
        context.isStopping.store(true, ordering: .relaxed)
        for daemon in daemons { daemon.stop() }
        context.registry.stopWatchdog()
    }
}

/// Carries a value across threads where a lock or the C library guarantees one thread at a time uses it.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
