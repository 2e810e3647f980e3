import Foundation
import MapGateBase
import Synchronization
import TestSupport
import Testing
@testable import MapGateServer

/// A `serve` session's side of the machine's tile server (``MachineSession``), driven over a
/// socket pair as the server would.
@Suite struct MachineSessionTests {
    /// Attaches a session on one end of a pair; the test is the server on the other.
    func attach(deliver: @escaping @Sendable (Double) throws -> Void) throws -> (session: MachineSession, server: LocalSocket) {
        let (server, client) = try LocalSocket.pair(name: "machine session")
        try Threads.detach(name: "test-server") {
            guard case .attach? = try? MachineSessionMessage.receive(on: server, timeout: 10) else { return }
            try? MachineSessionMessage.ready(url: "http://127.0.0.1:1", regions: 1).send(on: server)
        }
        let session = try MachineSession(socket: client, timeout: 10, deliver: deliver, ended: { _ in })
        return (session, server)
    }

    /// The use is delivered before the server stops waiting, a second before, or not at all: the
    /// deadline given to the delivery is the request's time plus the server's wait less a second
    /// (a delivery that took longer, its state database busy, was counted after the server had
    /// answered 503).
    @Test func theDeliveryIsGivenTheServersDeadline() throws {
        let deadlines = Mutex<[Double]>([])
        let (_, server) = try attach { deadline in deadlines.withLock { $0.append(deadline) } }
        let askedAt = MonotonicClock.nanoseconds - 2_000_000_000
        try MachineSessionMessage.deliver(askedAt: askedAt, within: 10).send(on: server)
        guard case .delivered = try MachineSessionMessage.receive(on: server, timeout: 10) else {
            Issue.record("not delivered")
            return
        }
        let deadline = try #require(deadlines.withLock { $0.first })
        #expect(abs(deadline - (Double(askedAt) / 1e9 + 9)) < 0.001, "\(deadline - Double(askedAt) / 1e9)")
    }

    /// A request older than that is not delivered at all.
    @Test func aRequestPastItsDeadlineIsNotDelivered() throws {
        let delivered = Atomic<Int>(0)
        let (session, server) = try attach { _ in delivered.add(1, ordering: .relaxed) }
        try MachineSessionMessage.deliver(askedAt: MonotonicClock.nanoseconds - 9_500_000_000, within: 10).send(on: server)
        server.shutDown()
        #expect(waitUntil(timeout: 10) { session.ended != nil })
        #expect(delivered.load(ordering: .relaxed) == 0)
    }
}
