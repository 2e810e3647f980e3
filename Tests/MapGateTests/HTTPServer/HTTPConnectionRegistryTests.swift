import Foundation
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
}
