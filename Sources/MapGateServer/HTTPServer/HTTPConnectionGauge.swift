import Synchronization

/// The number of open connections, kept by an ``HTTPServer`` and read by whoever reports it
/// (made first and handed to the server, so the reader needs no reference to the server).
public final class HTTPConnectionGauge: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public var count: Int { value.load(ordering: .relaxed) }
    @discardableResult
    func add(_ delta: Int) -> Int { value.wrappingAdd(delta, ordering: .relaxed).newValue }
}
