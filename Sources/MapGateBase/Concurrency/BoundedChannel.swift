import FoundationEssentials

/// A first-in, first-out channel of at most `capacity` elements between producer and consumer
/// threads: `send` blocks while it is full, `receive` while it is empty, so memory stays bounded
/// however fast one side is. `close` (no more elements) and `fail` (give up, with a reason) wake
/// both sides at once. The producer/consumer pipelines of `sync` (a package unpacked while it
/// downloads) and `publish` (a package hashed and written while it is compressed) use it.
///
/// `@unchecked Sendable`: `state` is read and written only with `condition` locked.
public final class BoundedChannel<Element: Sendable>: @unchecked Sendable {
    /// `send` on a channel already closed.
    public struct ClosedError: Error, Sendable, CustomStringConvertible {
        public var description: String { "the channel is closed" }
    }

    private struct State {
        var elements: [Element] = []
        var isClosed = false
        var failure: (any Error)?
    }

    public let capacity: Int
    private let condition = PthreadCondition()
    private var state = State()

    /// - Parameter capacity: how many elements may wait (at least 1).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Queues `element`, waiting while `capacity` elements wait. Throws the failure once the
    /// channel failed (the consumer gave up: the producer should stop), ``ClosedError`` once closed.
    public func send(_ element: Element) throws {
        condition.lock()
        defer { condition.unlock() }
        while state.elements.count >= capacity, state.failure == nil, !state.isClosed { condition.wait() }
        if let failure = state.failure { throw failure }
        guard !state.isClosed else { throw ClosedError() }
        state.elements.append(element)
        condition.broadcast()
    }

    /// The next element, waiting while there is none; nil once the channel is closed and every
    /// element sent before was received. Throws the failure once the channel failed.
    public func receive() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while state.elements.isEmpty, state.failure == nil, !state.isClosed { condition.wait() }
        if let failure = state.failure { throw failure }
        guard !state.elements.isEmpty else { return nil }
        let element = state.elements.removeFirst()
        condition.broadcast()
        return element
    }

    /// No more elements will be sent: the consumer gets those queued, then nil; a producer
    /// waiting to send wakes and gets ``ClosedError``. Closing twice, or after a failure, changes nothing.
    public func close() {
        condition.lock()
        state.isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Gives up with `error`: what is queued is dropped, and every `send` and `receive`, waiting
    /// or to come, throws it. The first failure stays.
    public func fail(_ error: any Error) {
        condition.lock()
        if state.failure == nil {
            state.failure = error
            state.elements.removeAll()
        }
        condition.broadcast()
        condition.unlock()
    }
}
