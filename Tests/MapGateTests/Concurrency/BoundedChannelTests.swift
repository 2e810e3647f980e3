import Foundation
import MapGate
@testable import MapGateBase
import TestSupport
import Testing

/// The one bounded channel of the producer/consumer pipelines (issue 28): what waits stays
/// within its capacity, and closing or failing it wakes whichever side is waiting.
@Suite struct BoundedChannelTests {
    struct Refused: Error, Equatable {
        var reason: String
    }

    /// Runs `body` on another thread; its outcome is read with `outcome` once it is there.
    final class Background<Value: Sendable>: Sendable {
        private let result = Locked<Result<Value, any Error>?>(nil)

        init(_ body: @escaping @Sendable () throws -> Value) throws {
            try Threads.detach { [result] in
                let outcome = Result { try body() }
                result.withLock { $0 = outcome }
            }
        }

        var outcome: Result<Value, any Error>? { result.withLock { $0 } }

        /// Waits (up to 10 s) for the outcome.
        func finished() -> Result<Value, any Error>? {
            _ = waitUntil { outcome != nil }
            return outcome
        }
    }

    @Test func elementsArriveInOrderAndNilAfterClose() throws {
        let channel = BoundedChannel<Int>(capacity: 3)
        let producer = try Background<Void> {
            for number in 0..<1000 { try channel.send(number) }
            channel.close()
        }
        var received: [Int] = []
        while let number = try channel.receive() { received.append(number) }
        #expect(received == Array(0..<1000))
        try #require(producer.finished()).get()
        #expect(try channel.receive() == nil, "a closed, drained channel stays empty")
    }

    /// A producer far faster than its consumer never has more than `capacity` elements waiting:
    /// it stops at the capacity, and goes on by one each time one is taken.
    @Test func theProducerWaitsAtTheCapacity() throws {
        let channel = BoundedChannel<Int>(capacity: 2)
        let sent = Locked(0)
        let producer = try Background<Void> {
            for number in 0..<5 {
                try channel.send(number)
                sent.withLock { $0 += 1 }
            }
        }
        #expect(waitUntil { sent.withLock { $0 } >= 2 })
        #expect(sent.withLock { $0 } == 2, "the third send waits for room")
        for taken in 1...3 {
            #expect(try channel.receive() == taken - 1)
            #expect(waitUntil { sent.withLock { $0 } >= 2 + taken })
            #expect(sent.withLock { $0 } == 2 + taken)
        }
        try #require(producer.finished()).get()
        #expect(try channel.receive() == 3)
        #expect(try channel.receive() == 4)
    }

    @Test func closeWakesAWaitingReceiver() throws {
        let channel = BoundedChannel<Int>(capacity: 1)
        let receiver = try Background<Int?> { try channel.receive() }
        channel.close()
        let outcome = try #require(receiver.finished())
        #expect(try outcome.get() == nil)
    }

    /// A sender waiting for room when the channel closes gets an error; what was queued before
    /// is still received.
    @Test func closeWakesAWaitingSender() throws {
        let channel = BoundedChannel<Int>(capacity: 1)
        try channel.send(1)
        let sender = try Background<Void> { try channel.send(2) }
        channel.close()
        let outcome = try #require(sender.finished())
        #expect(throws: BoundedChannel<Int>.ClosedError.self) { try outcome.get() }
        #expect(try channel.receive() == 1)
        #expect(try channel.receive() == nil)
        #expect(throws: BoundedChannel<Int>.ClosedError.self) { try channel.send(3) }
    }

    /// A failure reaches both sides, waiting or not, drops what was queued, and the first one stays.
    @Test func failureReachesBothSides() throws {
        let full = BoundedChannel<Int>(capacity: 1)
        try full.send(1)
        let sender = try Background<Void> { try full.send(2) }
        full.fail(Refused(reason: "disk full"))
        full.fail(Refused(reason: "later"))
        #expect(throws: Refused(reason: "disk full")) { try sender.finished()?.get() }
        #expect(throws: Refused(reason: "disk full")) { try full.receive() }
        #expect(throws: Refused(reason: "disk full")) { try full.send(3) }

        let empty = BoundedChannel<Int>(capacity: 4)
        let receiver = try Background<Int?> { try empty.receive() }
        empty.fail(Refused(reason: "bad gzip"))
        #expect(throws: Refused(reason: "bad gzip")) { try receiver.finished()?.get() }
        empty.close()
        #expect(throws: Refused(reason: "bad gzip")) { try empty.receive() }
    }
}
