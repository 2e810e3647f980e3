import FoundationEssentials

/// The source of "now". Injected everywhere time matters so tests can move it.
public struct Clock: Sendable {
    private let read: @Sendable () -> Date
    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }
    public var now: Date { read() }
    /// The system clock (which `faketime` can move for CLI tests).
    public static let system = Clock { Date() }
}
