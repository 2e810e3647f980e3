import FoundationEssentials

/// A value behind a lock, for state that threads share. Used instead of `Synchronization.Mutex`:
/// on Linux that Mutex locks with a futex inside the (uninstrumented) standard library, so
/// ThreadSanitizer cannot see it as a lock and reports every access it guards as a race. This one
/// locks a pthread mutex (a ``PthreadLock``), which the sanitizer understands, at the same cost.
public final class Locked<Value> {
    // `value` is read and written only while `lock` is held.
    private var value: Value
    private let lock = PthreadLock()

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<Answer>(_ body: (inout Value) throws -> Answer) rethrows -> Answer {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Shared between threads only when what it holds may be (as swift-nio's `NIOLockedValueBox`):
/// every access to `value` holds `lock`, so a `Sendable` value is safe to share; a value that is
/// not `Sendable` (a connection, a FreeType face) needs a box that says why it may cross.
extension Locked: @unchecked Sendable where Value: Sendable {}
