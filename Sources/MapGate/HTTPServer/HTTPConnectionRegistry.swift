import Foundation
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
    }

    let socket: Int32
    let state: Locked<State>

    init(socket: Int32, now: UInt64) {
        self.socket = socket
        state = Locked(State(waitingSince: now))
    }

    /// Payload bytes the kernel received on this socket (`tcpi_bytes_received`), nil if unknown.
    static func bytesReceived(_ socket: Int32) -> UInt64? {
        // Linux's `struct tcp_info` (232 bytes since 4.19); glibc's copy stops before
        // `tcpi_bytes_received`, which sits at offset 128 (linux/tcp.h, stable ABI).
        var info = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(info.count)
        let status = info.withUnsafeMutableBytes { getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, $0.baseAddress, &length) }
        guard status == 0, length >= 136 else { return nil }
        return info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 128, as: UInt64.self) }
    }
}

/// The open connections, and the watchdog that gives each request head a total deadline:
/// libmicrohttpd's own timeout is reset by every byte, so a client trickling one byte a second
/// would hold its connection for ever. Once bytes of a head have arrived, the client has
/// `headTimeout` seconds to finish it, else it is answered 408 and closed.
final class HTTPConnectionRegistry: Sendable {
    private let records = Locked<[ObjectIdentifier: HTTPConnectionRecord]>([:])
    let gauge: HTTPConnectionGauge
    let headTimeout: Double
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let wake = DispatchSemaphore(value: 0)
    private let onTimeout: @Sendable (String) -> Void

    init(headTimeout: Double, gauge: HTTPConnectionGauge, onTimeout: @escaping @Sendable (String) -> Void) {
        self.headTimeout = headTimeout
        self.gauge = gauge
        self.onTimeout = onTimeout
    }

    var count: Int { gauge.count }

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    func add(_ record: HTTPConnectionRecord) -> Int {
        records.withLock { $0[ObjectIdentifier(record)] = record }
        return gauge.add(1)
    }

    func remove(_ record: HTTPConnectionRecord) {
        record.state.withLock { $0.isClosed = true }
        records.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(record)) }
        gauge.add(-1)
    }

    func startWatchdog() {
        let thread = Thread { [self] in
            defer { done.signal() }
            let interval = max(0.1, min(1.0, headTimeout / 4))
            while !stopping.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + interval)
                if stopping.load(ordering: .relaxed) { return }
                scan()
            }
        }
        thread.name = "http-head-deadline"
        thread.start()
    }

    func stopWatchdog() {
        let (exchanged, _) = stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        guard exchanged else { return }
        wake.signal()
        done.wait()
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
