import FoundationEssentials
import MapGate

/// A clock that moves only when told: for tests and the demo's simulated month.
public final class ManualTime: Sendable {
    private let current: Locked<Date>

    public init(_ start: Date) {
        current = Locked(start)
    }

    public var now: Date { current.withLock { $0 } }
    public func advance(days: Double) { current.withLock { $0 = $0.addingTimeInterval(days * 86_400) } }
    public func advance(seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    public func set(_ date: Date) { current.withLock { $0 = date } }
    public var clock: Clock { Clock { self.now } }
}
