import FoundationEssentials

/// A bounded queue of byte chunks from one producer thread to one consumer thread: the producer
/// waits when `capacity` chunks are queued, so memory stays bounded however large the file.
///
/// `@unchecked Sendable`: every stored property is read and written only with `condition` locked.
final class ChunkChannel: @unchecked Sendable {
    private let condition = PthreadCondition()
    private var chunks: [Data] = []
    private var isClosed = false
    private var isAbandoned = false
    private let capacity: Int

    init(capacity: Int = 8) {
        self.capacity = capacity
    }

    /// Queues `chunk`; false when the consumer has given up (the producer should stop).
    func send(_ chunk: Data) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= capacity, !isAbandoned { condition.wait() }
        guard !isAbandoned else { return false }
        chunks.append(chunk)
        condition.broadcast()
        return true
    }

    /// No more chunks will come.
    func close() {
        condition.lock()
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next chunk, or nil once the channel is closed and drained.
    func receive() -> Data? {
        condition.lock()
        defer { condition.unlock() }
        while chunks.isEmpty, !isClosed { condition.wait() }
        guard !chunks.isEmpty else { return nil }
        let chunk = chunks.removeFirst()
        condition.broadcast()
        return chunk
    }

    /// The consumer failed: drop what is queued and make `send` return false from now on.
    func abandon() {
        condition.lock()
        isAbandoned = true
        chunks.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
