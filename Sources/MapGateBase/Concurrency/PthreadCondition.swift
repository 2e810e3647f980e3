import Glibc

/// A pthread mutex with a condition variable (`NSCondition`).
public final class PthreadCondition: @unchecked Sendable {
    private let lockObject = PthreadLock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    public func lock() { lockObject.lock() }
    public func unlock() { lockObject.unlock() }
    /// Waits for `broadcast`, with the lock held (released while waiting).
    public func wait() { pthread_cond_wait(condition, lockObject.mutex) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
