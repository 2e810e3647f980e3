import CLinux
import Glibc

/// Threads, locks and sleeping on pthreads: what mapgate took from Foundation's `Thread`,
/// `NSLock` and `NSCondition` (Foundation, with ICU, is not linked).
public enum Threads {
    /// Runs `body` on a new detached thread (`Thread.detachNewThread`), named `name` when given
    /// (`pthread_setname_np`, as `Thread.name` did).
    public static func detach(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
                if let name = start.name { _ = clinux_set_thread_name(name) }
                start.body()
                return nil
            }, start)
        if result != 0 {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            fatalError("cannot start a thread: \(String(cString: strerror(result)))")
        }
    }

    /// Blocks the calling thread for `seconds` (`Thread.sleep(forTimeInterval:)`).
    public static func sleep(_ seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

private final class ThreadStart {
    let name: String?
    let body: @Sendable () -> Void
    init(name: String?, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// A pthread mutex (`NSLock`).
public final class PthreadLock: @unchecked Sendable {
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
}

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
