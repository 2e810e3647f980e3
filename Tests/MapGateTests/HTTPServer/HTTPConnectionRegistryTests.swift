import Foundation
import TestSupport
import Testing
@testable import MapGateServer

#if canImport(Glibc)
import Glibc
#endif

/// Admission (issue 40 item 12): a per-client limit for clients not on this machine, and room
/// made by closing the idlest connection. Records with sockets of a socket pair stand in for
/// connections from other addresses.
@Suite struct HTTPConnectionRegistryTests {
    func record(_ client: String?, idleFor seconds: Double = 0) -> (HTTPConnectionRecord, Int32) {
        var pair: [Int32] = [0, 0]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
        let now = HTTPConnectionRegistry.now
        let record = HTTPConnectionRecord(socket: pair[0], now: now - UInt64(seconds * 1e9), remoteClient: client)
        return (record, pair[1])
    }

    func registry() -> HTTPConnectionRegistry {
        HTTPConnectionRegistry(headTimeout: 10, evictableAfter: 5, gauge: HTTPConnectionGauge()) { _ in }
    }

    func isAdmitted(_ record: HTTPConnectionRecord) -> Bool { record.state.withLock { $0.isAdmitted } }

    @Test func oneRemoteClientGetsAtMostItsShare() {
        let registry = registry()
        let from = (0..<4).map { _ in record("192.168.1.20") }
        for (connection, _) in from { registry.add(connection, admittingUpTo: 100, perClientLimit: 3) }
        #expect(from.map { isAdmitted($0.0) } == [true, true, true, false])
        let other = record("192.168.1.21").0
        registry.add(other, admittingUpTo: 100, perClientLimit: 3)
        #expect(isAdmitted(other), "another client is not held back")
        let local = (0..<5).map { _ in record(nil).0 }
        for connection in local { registry.add(connection, admittingUpTo: 100, perClientLimit: 3) }
        #expect(local.allSatisfy(isAdmitted), "loopback clients are not limited per client")
        registry.remove(from[0].0)
        let again = record("192.168.1.20").0
        registry.add(again, admittingUpTo: 100, perClientLimit: 3)
        #expect(isAdmitted(again), "a closed connection gives its client's share back")
    }

    @Test func theIdlestConnectionMakesRoomOnlyOnceIdleLongEnough() {
        let registry = registry()
        let recent = record(nil, idleFor: 1)
        let idlest = record(nil, idleFor: 60)
        let idle = record(nil, idleFor: 30)
        for (connection, _) in [recent, idlest, idle] { registry.add(connection, admittingUpTo: 3) }
        let busy = idle.0
        busy.state.withLock { $0.inRequest = true }  // a request under way is never closed
        let newcomer = record(nil).0
        registry.add(newcomer, admittingUpTo: 3)
        #expect(isAdmitted(newcomer))
        #expect(idlest.0.state.withLock { $0.evicted } && !isAdmitted(idlest.0))
        var byte: UInt8 = 0
        #expect(recv(idlest.1, &byte, 1, 0) == 0, "its socket was shut down")
        // Now only a busy connection and recent ones: the next newcomer is refused.
        let late = record(nil).0
        registry.add(late, admittingUpTo: 3)
        #expect(!isAdmitted(late))
        registry.remove(idlest.0)  // libmicrohttpd reports the evicted one closed: no double count
        let after = record(nil).0
        registry.add(after, admittingUpTo: 3)
        #expect(!isAdmitted(after), "the evicted connection's admission went to the newcomer, not back to the pool")
    }

    /// Found by an attack: at libmicrohttpd's own limit (admitted and refused together) it
    /// accepts nothing more, so no newcomer could make room, and `/health` waited 30 s in the
    /// kernel's backlog. Near that limit the oldest silent refused connection is closed.
    @Test func nearTheLimitOfOpenConnectionsTheOldestRefusedOneMakesRoom() {
        let registry = registry()
        let admitted = [record(nil), record(nil)]
        for (connection, _) in admitted { registry.add(connection, admittingUpTo: 2, total: 4) }
        let refused = record(nil, idleFor: 3)
        registry.add(refused.0, admittingUpTo: 2, total: 4)
        #expect(!isAdmitted(refused.0) && !refused.0.state.withLock { $0.evicted }, "a place is still free")
        let last = record(nil)
        registry.add(last.0, admittingUpTo: 2, total: 4)
        #expect(refused.0.state.withLock { $0.evicted }, "the oldest refused connection stayed")
        var byte: UInt8 = 0
        #expect(recv(refused.1, &byte, 1, 0) == 0, "its socket was shut down")
        #expect(!last.0.state.withLock { $0.evicted })
        #expect(admitted.allSatisfy { isAdmitted($0.0) && !$0.0.state.withLock { $0.evicted } }, "fresh admitted connections are kept")
    }

    /// A connected TCP pair on 127.0.0.1: (the server's end, the client's end). Only a TCP
    /// socket counts the bytes it received (`TCP_INFO`), which the rules below read.
    func tcpPair() throws -> (server: Int32, client: Int32) {
        let listener = try HTTPListener(host: "127.0.0.1", port: 0)
        let listening = listener.take()
        defer { close(listening) }
        let client = try #require(LoopbackSocket.connect(port: listener.port))
        let server = accept(listening, nil, nil)
        try #require(server >= 0)
        return (server, client)
    }

    /// The closed door's rule (issue 42's flood, decisions/system-mode.md): a connection idle
    /// long enough makes room for a newcomer, unless its bytes are in (its head has arrived and
    /// libmicrohttpd has not read it yet): that one is a request about to be answered.
    @Test func aConnectionWhoseBytesAreInIsNotEvicted() throws {
        let registry = registry()
        let long = UInt64(60e9)
        let speaking = try tcpPair(), silent = try tcpPair()
        defer { for fd in [speaking.server, speaking.client, silent.server, silent.client] { close(fd) } }
        let now = HTTPConnectionRegistry.now
        // The speaking one has been idle longer, so it would be chosen first without the rule.
        let first = HTTPConnectionRecord(socket: speaking.server, now: now - 2 * long)
        let second = HTTPConnectionRecord(socket: silent.server, now: now - long)
        registry.add(first, admittingUpTo: 2)
        registry.add(second, admittingUpTo: 2)
        #expect(send(speaking.client, "GET", 3, 0) == 3)
        // TCP_INFO counts the bytes once the kernel has them: wait for that, not for a time.
        let deadline = HTTPConnectionRegistry.now + UInt64(5e9)
        while (HTTPConnectionRecord.bytesReceived(speaking.server) ?? 0) < 3, HTTPConnectionRegistry.now < deadline { usleep(1_000) }
        let newcomer = HTTPConnectionRecord(socket: -1, now: now)
        registry.add(newcomer, admittingUpTo: 2)
        #expect(isAdmitted(newcomer))
        #expect(!first.state.withLock { $0.evicted } && isAdmitted(first), "a connection whose bytes are in is kept")
        #expect(second.state.withLock { $0.evicted }, "the silent one made room")
    }

    /// A connection being answered whose client has stopped reading is closed one still period
    /// after its last byte moved, not two (found by an attack on h2o, where this watchdog is the
    /// only timer: it took the request's own bytes for progress at its first look, and a client
    /// that never read held its answer's share of the unsent-body budget for twice the idle timeout).
    @Test func aStillConnectionIsClosedOnePeriodAfterItsLastByte() throws {
        let (server, client) = try tcpPair()
        defer {
            close(server)
            close(client)
        }
        let registry = HTTPConnectionRegistry(headTimeout: 10, stillTimeout: 1, gauge: HTTPConnectionGauge()) { _ in }
        let record = HTTPConnectionRecord(socket: server, now: HTTPConnectionRegistry.now)
        registry.add(record, admittingUpTo: 10)
        record.state.withLock { $0.inRequest = true }
        // The request comes, part of the answer goes (the client's kernel takes it), then nothing.
        let request = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(send(client, request, request.count, 0) == request.count)
        let answer = [UInt8](repeating: 0x61, count: 1_000)
        #expect(send(server, answer, answer.count, 0) == answer.count)
        let moved = Date()
        try registry.startWatchdog()
        defer { registry.stopWatchdog() }
        #expect(waitUntil(timeout: 4) { record.state.withLock { $0.evicted } })
        let seconds = Date().timeIntervalSince(moved)
        #expect(seconds < 1.7, "closed \(seconds) s after its last byte, with a still period of 1 s")
    }

    /// Another thread may note a connection's activity after a look read the clock, so a
    /// reading later than the look's is normal: it is fresh, never an overflow (it crashed the
    /// test bundle once under load, in `hasRequestUnderWay`).
    @Test func activityNotedAfterTheLookReadTheClockIsFresh() throws {
        let registry = HTTPConnectionRegistry(headTimeout: 0.4, evictableAfter: 0.05, gauge: HTTPConnectionGauge()) { _ in }
        let later = HTTPConnectionRegistry.now + UInt64(10e9)
        let (record, peer) = self.record(nil)
        defer { close(peer) }
        record.state.withLock { $0.waitingSince = later }
        registry.add(record, admittingUpTo: 1)
        #expect(registry.hasRequestUnderWay(freshWithin: 0.2), "a connection answered just now may be sending its next request")
        let newcomer = self.record(nil).0
        registry.add(newcomer, admittingUpTo: 1)
        #expect(!isAdmitted(newcomer) && !record.state.withLock { $0.evicted }, "it has not been idle at all")
        record.state.withLock { $0.headSeenAt = later }
        try registry.startWatchdog()
        usleep(350_000)  // the watchdog looks every 0.1 s
        registry.stopWatchdog()
        #expect(!record.state.withLock { $0.timedOut }, "its head has only just been seen")
    }
}
