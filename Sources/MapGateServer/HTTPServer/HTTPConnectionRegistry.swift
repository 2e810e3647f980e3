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
        /// The HTTP layer answered the request `target` names (else the library refused it).
        var answered = true
        /// The status of a head the library refused before the HTTP layer saw it (h2o's glue says).
        var refusedWith = 0
        /// The connection came within `maxConnections` and is served for as long as it lasts;
        /// one past it (in the reserve) only gets its 503.
        var isAdmitted = false
        /// Bytes of a prepared answer's body reserved from the ``HTTPBodyBudget`` for the request
        /// being answered; given back when libmicrohttpd says the request is done.
        var heldBodyBytes = 0
        /// Closed by the registry to make room for a new client (it was idle the longest).
        var evicted = false
        /// Bytes received and acknowledged on the socket when the watchdog last saw them move, and
        /// when (``HTTPConnectionRegistry/stillTimeout``). Nil: not read since the last answer
        /// (``HTTPDaemonContext/completed(_:pendingBytes:received:)``), the watchdog's next look
        /// reads them, and the connection has been still since `movedAt`.
        var movedBytes: UInt64? = 0
        var movedAt: UInt64
    }

    let socket: Int32
    /// The socket's inode (sockfs numbers each socket): ``isItsSocket`` tells a descriptor number
    /// that still names this connection from one reused for another.
    let inode: UInt64
    let state: Locked<State>
    /// The client's address when it is not on this machine (nil on loopback): what the
    /// per-client limit counts.
    let remoteClient: String?

    init(socket: Int32, now: UInt64, remoteClient: String? = nil) {
        self.socket = socket
        self.remoteClient = remoteClient
        var info = stat()
        inode = fstat(socket, &info) == 0 ? UInt64(info.st_ino) : 0
        state = Locked(State(waitingSince: now, movedAt: now))
    }

    /// Whether ``socket`` still names this connection's socket. h2o closes a connection's
    /// descriptor just before it says so (``HTTPConnectionRegistry/remove(_:)``), and the kernel
    /// may give the number to the next connection at once: the watchdog, on its own thread, checks
    /// this before it writes to or shuts down the number, so as never to touch another client's
    /// connection. (libmicrohttpd says first, then closes.)
    var isItsSocket: Bool {
        var info = stat()
        return fstat(socket, &info) == 0 && UInt64(info.st_ino) == inode
    }

    /// The peer's address of `socket` when the connection is not on loopback, else nil.
    static func remoteClient(of socket: Int32) -> String? {
        guard !isOnLoopback(socket) else { return nil }
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) } }
        guard got == 0 else { return "?" }
        var text = [CChar](repeating: 0, count: 64)
        let family = Int32(peer.ss_family)
        let converted: UnsafePointer<CChar>? = withUnsafePointer(to: &peer) { pointer in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in withUnsafePointer(to: address.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) } }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in withUnsafePointer(to: address.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) } }
            default: nil
            }
        }
        return converted == nil ? "?" : String(cString: text)
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

    /// Payload bytes the kernel received on this socket (`tcpi_bytes_received`), and those plus
    /// the ones the peer acknowledged (`tcpi_bytes_acked`), which stand still while neither side
    /// moves; nil if unknown.
    static func transfer(_ socket: Int32) -> (received: UInt64, moved: UInt64)? {
        // Linux's `struct tcp_info` (232 bytes since 4.19); glibc's copy stops before
        // `tcpi_bytes_acked` and `tcpi_bytes_received`, at offsets 120 and 128 (linux/tcp.h,
        // stable ABI). On the stack: this runs after every answer.
        withUnsafeTemporaryAllocation(byteCount: 232, alignment: 8) { info in
            var length = socklen_t(info.count)
            guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, info.baseAddress, &length) == 0, length >= 136 else { return nil }
            let raw = UnsafeRawBufferPointer(info)
            let received = raw.loadUnaligned(fromByteOffset: 128, as: UInt64.self)
            return (received, received &+ raw.loadUnaligned(fromByteOffset: 120, as: UInt64.self))
        }
    }

    /// Payload bytes the kernel received on this socket (`tcpi_bytes_received`), nil if unknown.
    static func bytesReceived(_ socket: Int32) -> UInt64? {
        transfer(socket)?.received
    }
}

/// The open connections, and the watchdog that gives each request head a total deadline:
/// libmicrohttpd's own timeout is reset by every byte, so a client trickling one byte a second
/// would hold its connection for ever. Once bytes of a head have arrived, the client has
/// `headTimeout` seconds to finish it, else it is answered 408 and closed.
final class HTTPConnectionRegistry: Sendable {
    private struct Admissions {
        var records: [ObjectIdentifier: HTTPConnectionRecord] = [:]
        /// Connections admitted (within `maxConnections`) and still open.
        var admitted = 0
        /// Admitted connections per client not on this machine.
        var perClient: [String: Int] = [:]
    }

    private let admissions = Locked(Admissions())
    let gauge: HTTPConnectionGauge
    let headTimeout: Double
    /// Seconds a connection may move no byte either way (an idle keep-alive connection, or a
    /// client that does not read its answer) before the watchdog closes it; nil when the library
    /// does (libmicrohttpd). h2o's own timer follows the wall clock, and does not see a client
    /// that stops reading.
    let stillTimeout: Double?
    /// A connection idle (no request under way, none being sent) this long may be closed to make
    /// room for a new client once `maxConnections` are open (issue 40 item 12).
    let evictableAfter: Double
    private let onTimeout: @Sendable (String) -> Void
    /// Looks at the connections waiting for a head, a quarter of the deadline apart (0.1–1 s).
    private let watchdog = Locked<PeriodicWorker?>(nil)

    init(headTimeout: Double, stillTimeout: Double? = nil, evictableAfter: Double = 15, gauge: HTTPConnectionGauge, onTimeout: @escaping @Sendable (String) -> Void) {
        self.headTimeout = headTimeout
        self.stillTimeout = stillTimeout
        self.evictableAfter = evictableAfter
        self.gauge = gauge
        self.onTimeout = onTimeout
    }

    var count: Int { gauge.count }

    static var now: UInt64 { MonotonicClock.nanoseconds }

    /// Tracks a new connection and decides, once, whether it is served. It is, when fewer than
    /// `limit` admitted connections are open and its client (not on this machine) has fewer than
    /// `perClientLimit`; at `limit`, the admitted connection idle the longest (at least
    /// ``evictableAfter``) is closed to make room, as nginx closes idle keep-alive connections
    /// when it runs short, so that idle clients cannot keep new ones out. An admitted connection
    /// is never refused a request later.
    ///
    /// - Parameter total: the connections libmicrohttpd keeps open at most (admitted and
    ///   refused), past which it accepts none, so that nothing here could make room for the next
    ///   (found by an attack: past 10,000 + 256 connections a new one, `/health` too, waited in the
    ///   kernel's backlog until an idle one timed out, 30 s). Once this connection leaves one
    ///   place or none (one, for libmicrohttpd's threads, whose limits are each their share), the
    ///   oldest silent connection that was refused is closed (it would only get its 503), else the
    ///   idlest admitted one that may be: the next connection is accepted, and admitted or told
    ///   503 at once.
    func add(_ record: HTTPConnectionRecord, admittingUpTo limit: Int, perClientLimit: Int = .max, total: Int = .max) {
        let now = Self.now
        admissions.withLock { admissions in
            var admit = true
            if let client = record.remoteClient, admissions.perClient[client, default: 0] >= perClientLimit {
                admit = false
            } else if admissions.admitted >= limit {
                admit = evictIdlest(from: &admissions, now: now)
            }
            if admit {
                admissions.admitted += 1
                if let client = record.remoteClient { admissions.perClient[client, default: 0] += 1 }
            }
            record.state.withLock { $0.isAdmitted = admit }
            admissions.records[ObjectIdentifier(record)] = record
            if admissions.records.count >= total - 1 { makeRoom(in: &admissions, besides: record, now: now) }
        }
        gauge.add(1)
    }

    /// Closes the oldest silent connection that was refused admission (not `newcomer`), else the
    /// idlest admitted one idle long enough (``evictIdlest(from:now:)``).
    private func makeRoom(in admissions: inout Admissions, besides newcomer: HTTPConnectionRecord, now: UInt64) {
        var refused: [(record: HTTPConnectionRecord, since: UInt64)] = []
        for record in admissions.records.values where record !== newcomer {
            let since: UInt64? = record.state.withLock { state in
                guard !state.isAdmitted, !state.isClosed, !state.inRequest, !state.evicted, state.headSeenAt == nil else { return nil }
                return state.waitingSince
            }
            if let since { refused.append((record, since)) }
        }
        refused.sort { $0.since < $1.since }
        if refused.prefix(32).lazy.map(\.record).first(where: close(ifSilent:)) != nil { return }
        _ = evictIdlest(from: &admissions, now: now)
    }

    /// Closes the admitted connection idle the longest, if one has been idle long enough, and
    /// hands its admission over: true when there was one. One whose bytes have come in (a head
    /// libmicrohttpd has not read yet) is passed over for the next idlest, not the end of the
    /// search: found by a test, when a flood's newcomer was refused beside a silent connection.
    private func evictIdlest(from admissions: inout Admissions, now: UInt64) -> Bool {
        let threshold = UInt64(evictableAfter * 1e9)
        var candidates: [(record: HTTPConnectionRecord, since: UInt64)] = []
        for record in admissions.records.values {
            let since: UInt64? = record.state.withLock { state in
                guard state.isAdmitted, !state.isClosed, !state.inRequest, !state.evicted, state.headSeenAt == nil else { return nil }
                return state.waitingSince
            }
            if let since, MonotonicClock.elapsed(from: since, to: now) >= threshold { candidates.append((record, since)) }
        }
        // At most the 32 idlest are looked at again (a system call each, under the registry's
        // lock): one with bytes in is answered soon anyway.
        candidates.sort { $0.since < $1.since }
        guard let victim = candidates.prefix(32).lazy.map(\.record).first(where: close(ifSilent:)) else { return false }
        admissions.admitted -= 1
        if let client = victim.remoteClient { release(client, in: &admissions) }
        return true
    }

    /// Shuts an idle connection down for eviction, unless, looked at again under its lock, a
    /// request began meanwhile or its bytes are in (the watchdog sees them only at its next look).
    private func close(ifSilent victim: HTTPConnectionRecord) -> Bool {
        victim.state.withLock { state -> Bool in
            guard !state.isClosed, !state.inRequest, state.headSeenAt == nil, victim.isItsSocket,
                (HTTPConnectionRecord.bytesReceived(victim.socket) ?? 0) <= state.baselineBytes
            else { return false }
            shutdown(victim.socket, Int32(SHUT_RDWR))
            state.evicted = true
            state.isAdmitted = false
            return true
        }
    }

    private func release(_ client: String, in admissions: inout Admissions) {
        admissions.perClient[client, default: 1] -= 1
        if admissions.perClient[client] == 0 { admissions.perClient[client] = nil }
    }

    func remove(_ record: HTTPConnectionRecord) {
        let wasAdmitted = record.state.withLock { state in
            state.isClosed = true
            return state.isAdmitted
        }
        admissions.withLock { admissions in
            if wasAdmitted {
                admissions.admitted -= 1
                if let client = record.remoteClient { release(client, in: &admissions) }
            }
            admissions.records.removeValue(forKey: ObjectIdentifier(record))
        }
        gauge.add(-1)
    }

    /// Whether a client's request is under way on a connection: being answered, its head (or a
    /// part) arrived and not answered yet, or a connection made or answered less than `fresh`
    /// seconds ago that has sent nothing since (its next request may be on its way: a client
    /// writes as soon as it connects, and a keep-alive client right after its answer; found by an
    /// attack: such clients got an empty reply when only new connections were waited for).
    /// What a server handing its socket back waits for before it closes its connections.
    func hasRequestUnderWay(freshWithin fresh: Double) -> Bool {
        let all = admissions.withLock { Array($0.records.values) }
        let now = Self.now
        let freshness = UInt64(fresh * 1e9)
        return all.contains { record in
            record.state.withLock { state in
                guard !state.isClosed, !state.timedOut, !state.evicted else { return false }
                if state.inRequest { return true }
                let received = HTTPConnectionRecord.bytesReceived(record.socket) ?? state.baselineBytes
                if received > state.baselineBytes { return true }
                return MonotonicClock.elapsed(from: state.waitingSince, to: now) < freshness
            }
        }
    }

    func startWatchdog() throws {
        let shortest = min(headTimeout, stillTimeout ?? headTimeout)
        let worker = PeriodicWorker(name: "http-head-deadline", interval: max(0.1, min(1.0, shortest / 4))) { [weak self] in self?.scan() }
        watchdog.withLock { $0 = worker }
        try worker.start()
    }

    func stopWatchdog() {
        watchdog.withLock { $0 }?.stop()
    }

    /// The 408, with the `Date` every answer carries (RFC 9110 §6.6.1; found by an attack: this
    /// one alone had none).
    private static func timeoutAnswer() -> [UInt8] {
        Array(
            "HTTP/1.1 408 Request Timeout\r\nDate: \(HTTPDate.string(Date()))\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\nrequest timed out\n".utf8)
    }

    /// One look at every connection waiting for a head (outside the registry's lock).
    private func scan() {
        let all = admissions.withLock { Array($0.records.values) }
        let now = Self.now
        let limit = UInt64(headTimeout * 1e9)
        let stillLimit = stillTimeout.map { UInt64($0 * 1e9) }
        for record in all {
            record.state.withLock { state in
                guard !state.isClosed, !state.timedOut else { return }
                if let stillLimit, !state.evicted {
                    // A connection being answered is looked at every time (a client that stops
                    // reading must be closed one period after its last byte, not two: found by an
                    // attack); one waiting for a head once its time is up (10,000 idle connections:
                    // one look each per period; `completed` noted what had moved when it began).
                    let due = MonotonicClock.elapsed(from: state.movedAt, to: now) >= stillLimit
                    if state.movedBytes == nil {
                        // The first look since an answer h2o counted: still since the answer.
                        state.movedBytes = HTTPConnectionRecord.transfer(record.socket)?.moved ?? 0
                    } else if state.inRequest || due {
                        let moved = HTTPConnectionRecord.transfer(record.socket)?.moved ?? state.movedBytes
                        if moved != state.movedBytes {
                            state.movedBytes = moved
                            state.movedAt = now
                        } else if due, record.isItsSocket {
                            shutdown(record.socket, Int32(SHUT_RDWR))
                            state.evicted = true
                            return
                        }
                    }
                }
                guard !state.inRequest else { return }
                if let seen = state.headSeenAt {
                    guard MonotonicClock.elapsed(from: seen, to: now) >= limit, record.isItsSocket else { return }
                    // The connection's thread is not writing (no request is being answered).
                    // libmicrohttpd cannot close the socket while this lock is held (it says so,
                    // in `remove`, first); h2o closes it first, which `isItsSocket` looked for.
                    _ = Self.timeoutAnswer().withUnsafeBytes { send(record.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
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
