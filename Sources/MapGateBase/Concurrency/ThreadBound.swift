import Dispatch
import Glibc

/// A value that belongs to one thread, or to one serial `DispatchQueue`, as swift-nio's
/// `NIOLoopBound` belongs to an event loop. In debug builds every access checks that it is made
/// there, and traps when it is not: "only touched on the worker's thread" is checked, not
/// promised. Release builds check nothing.
///
/// `@unchecked Sendable`: the box itself may be handed to another thread (a closure that runs on
/// the owning queue holds it), but its value is read and written only on the owner, which every
/// access checks in debug builds.
public final class ThreadBound<Value>: @unchecked Sendable {
    /// Where the value may be touched.
    public enum Owner {
        case thread(pthread_t)
        /// Work running on the queue (`async` or `sync`).
        case queue(DispatchQueue)
    }

    public let owner: Owner
    private var storage: Value

    /// A value owned by the calling thread.
    public init(_ value: Value) {
        storage = value
        owner = .thread(pthread_self())
    }

    /// A value owned by `queue`, handed over by the thread that made it.
    public init(_ value: sending Value, queue: DispatchQueue) {
        storage = value
        owner = .queue(queue)
    }

    /// The value; on the owner only.
    public var value: Value {
        _read {
            checkOwner()
            yield storage
        }
        _modify {
            checkOwner()
            yield &storage
        }
    }

    private func checkOwner() {
        #if DEBUG
        switch owner {
        case .thread(let thread):
            precondition(pthread_equal(thread, pthread_self()) != 0, "a ThreadBound<\(Value.self)> was touched off the thread that owns it")
        case .queue(let queue):
            dispatchPrecondition(condition: .onQueue(queue))
        }
        #endif
    }
}
