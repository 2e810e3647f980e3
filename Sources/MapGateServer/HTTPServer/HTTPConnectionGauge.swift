import Synchronization

/// The number of open connections, kept by an ``HTTPServer`` and read by whoever reports it
/// (made first and handed to the server, so the reader needs no reference to the server).
public final class HTTPConnectionGauge: Sendable {
    /// ``onRise(_:)``'s watcher is told each time the count rises to a multiple of this.
    public static let step = 256

    private let value = Atomic<Int>(0)
    private let watcher = Mutex<(@Sendable (Int) -> Void)?>(nil)

    public init() {}

    public var count: Int { value.load(ordering: .relaxed) }

    /// Calls `body` with the count each time it rises to a multiple of ``step`` (on the thread
    /// that opened the connection: `body` must return at once). One watcher: a later one replaces it.
    public func onRise(_ body: @escaping @Sendable (Int) -> Void) {
        watcher.withLock { $0 = body }
    }

    @discardableResult
    func add(_ delta: Int) -> Int {
        let count = value.wrappingAdd(delta, ordering: .relaxed).newValue
        if delta > 0, count % Self.step == 0, let body = watcher.withLock({ $0 }) { body(count) }
        return count
    }
}
