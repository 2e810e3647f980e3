import Synchronization

/// Bounds the bytes that answers made for one request (a tile read for it, a page) may hold in
/// total until their clients have taken them: a client that asks and never reads holds its
/// answer's body for as long as its connection lasts, so without a bound a few thousand such
/// clients hold gigabytes. An answer past the bound is refused (503). Bodies shared between
/// answers (``HTTPBodyBytes`` a handler keeps) are not counted: they are held once anyway.
public final class HTTPBodyBudget: Sendable {
    public let limit: Int
    private let used = Atomic<Int>(0)

    public init(limit: Int) { self.limit = limit }

    /// Bytes held now.
    public var inUse: Int { used.load(ordering: .relaxed) }

    /// Whether `count` more bytes fit now (nothing is taken).
    public func fits(_ count: Int) -> Bool { inUse + count <= limit }

    /// Takes `count` bytes of the budget; false (nothing taken) when they do not fit.
    func reserve(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ count: Int) {
        used.subtract(count, ordering: .relaxed)
    }
}
