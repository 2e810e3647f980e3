import FoundationEssentials
import MapGateBase
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One open client connection, as the HTTP layer tracks it beside libmicrohttpd: its socket,
/// the raw target of the request being read, and the head deadline's bookkeeping.
final class HTTPConnectionRecord: Sendable {
    struct State {
        /// The request target as sent (libmicrohttpd's URI log callback gives it raw).
        var target = ""
        /// A request head is complete and being answered (between the handler and "completed").
        var inRequest = false
        /// Since when the connection waits for a request head (start, or the last answer).
        var waitingSince: UInt64
        /// Bytes the kernel had received when the wait began (0 for a new connection).
        var baselineBytes: UInt64 = 0
        /// When the watchdog first saw bytes of a new head arrive.
        var headSeenAt: UInt64?
        /// libmicrohttpd said the connection closed: the socket must not be touched any more.
        var isClosed = false
        var timedOut = false
        /// The HTTP layer answered the request `target` names (else libmicrohttpd refused it).
        var answered = true
        /// The connection came within `maxConnections` and is served for as long as it lasts;
        /// one past it (in the reserve) only gets its 503.
        var isAdmitted = false
        /// Bytes of a prepared answer's body reserved from the ``HTTPBodyBudget`` for the request
        /// being answered; given back when libmicrohttpd says the request is done.
        var heldBodyBytes = 0
    }

    let socket: Int32
    let state: Locked<State>

    init(socket: Int32, now: UInt64) {
        self.socket = socket
        state = Locked(State(waitingSince: now))
    }

    /// Whether both ends of the connection are loopback addresses (127.0.0.0/8 or ::1, also
    /// as an IPv4-mapped IPv6 address).
    static func isOnLoopback(_ socket: Int32) -> Bool {
        func isLoopback(_ storage: sockaddr_storage) -> Bool {
            let family = Int32(storage.ss_family)
            return withUnsafeBytes(of: storage) { raw in
                switch family {
                case AF_INET:
                    return raw.load(as: sockaddr_in.self).sin_addr.s_addr.bigEndian >> 24 == 127
                case AF_INET6:
                    let bytes = withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
                    if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] == 1 { return true }
                    return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
                default:
                    return false
                }
            }
        }
        var local = sockaddr_storage()
        var peer = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var peerLength = localLength
        let gotLocal = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &localLength) } }
        let gotPeer = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &peerLength) } }
        return gotLocal == 0 && gotPeer == 0 && isLoopback(local) && isLoopback(peer)
    }

    /// Payload bytes the kernel received on this socket (`tcpi_bytes_received`), nil if unknown.
    static func bytesReceived(_ socket: Int32) -> UInt64? {
        // Linux's `struct tcp_info` (232 bytes since 4.19); glibc's copy stops before
        // `tcpi_bytes_received`, which sits at offset 128 (linux/tcp.h, stable ABI).
        // On the stack: this runs after every answer.
        withUnsafeTemporaryAllocation(byteCount: 232, alignment: 8) { info in
            var length = socklen_t(info.count)
            guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, info.baseAddress, &length) == 0, length >= 136 else { return nil }
            return UnsafeRawBufferPointer(info).loadUnaligned(fromByteOffset: 128, as: UInt64.self)
        }
    }
}

/// The open connections, and the watchdog that gives each request head a total deadline:
/// libmicrohttpd's own timeout is reset by every byte, so a client trickling one byte a second
/// would hold its connection for ever. Once bytes of a head have arrived, the client has
/// `headTimeout` seconds to finish it, else it is answered 408 and closed.
final class HTTPConnectionRegistry: Sendable {
    private let records = Locked<[ObjectIdentifier: HTTPConnectionRecord]>([:])
    /// Connections admitted (within `maxConnections`) and still open.
    private let admitted = Atomic<Int>(0)
    let gauge: HTTPConnectionGauge
    let headTimeout: Double
    private let onTimeout: @Sendable (String) -> Void
    /// Looks at the connections waiting for a head, a quarter of the deadline apart (0.1–1 s).
    private let watchdog = Locked<PeriodicWorker?>(nil)

    init(headTimeout: Double, gauge: HTTPConnectionGauge, onTimeout: @escaping @Sendable (String) -> Void) {
        self.headTimeout = headTimeout
        self.gauge = gauge
        self.onTimeout = onTimeout
    }

    var count: Int { gauge.count }

    static var now: UInt64 { MonotonicClock.nanoseconds }

    /// Tracks a new connection, admitting it when fewer than `limit` admitted ones are open.
    /// The decision is made once, here: an admitted connection is never refused later, however
    /// many others arrive while it is kept alive.
    func add(_ record: HTTPConnectionRecord, admittingUpTo limit: Int) {
        let isAdmitted = admitted.wrappingAdd(1, ordering: .relaxed).newValue <= limit
        if !isAdmitted { admitted.wrappingAdd(-1, ordering: .relaxed) }
        record.state.withLock { $0.isAdmitted = isAdmitted }
        records.withLock { $0[ObjectIdentifier(record)] = record }
        gauge.add(1)
    }

    func remove(_ record: HTTPConnectionRecord) {
        let wasAdmitted = record.state.withLock { state in
            state.isClosed = true
            return state.isAdmitted
        }
        if wasAdmitted { admitted.wrappingAdd(-1, ordering: .relaxed) }
        records.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(record)) }
        gauge.add(-1)
    }

    func startWatchdog() throws {
        let worker = PeriodicWorker(name: "http-head-deadline", interval: max(0.1, min(1.0, headTimeout / 4))) { [weak self] in self?.scan() }
        watchdog.withLock { $0 = worker }
        try worker.start()
    }

    func stopWatchdog() {
        watchdog.withLock { $0 }?.stop()
    }

    private static let timeoutAnswer = Array(
        "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\nrequest timed out\n".utf8)

    /// One look at every connection waiting for a head (outside the registry's lock).
    private func scan() {
        let all = records.withLock { Array($0.values) }
        let now = Self.now
        let limit = UInt64(headTimeout * 1e9)
        for record in all {
            record.state.withLock { state in
                guard !state.isClosed, !state.inRequest, !state.timedOut else { return }
                if let seen = state.headSeenAt {
                    guard now - seen >= limit else { return }
                    // The connection's thread is not writing (no request is being answered) and
                    // cannot close the socket while this lock is held (see `remove`).
                    _ = Self.timeoutAnswer.withUnsafeBytes { send(record.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                    shutdown(record.socket, Int32(SHUT_RDWR))
                    state.timedOut = true
                    onTimeout(state.target)
                } else if let received = HTTPConnectionRecord.bytesReceived(record.socket), received > state.baselineBytes {
                    state.headSeenAt = now
                }
            }
        }
    }
}
