import FoundationEssentials

/// The source of "now". Injected everywhere time matters so tests can move it.
public struct Clock: Sendable {
    private let read: @Sendable () -> Date
    private let readBoot: @Sendable () -> BootReading?

    /// - Parameter boot: the boot's id and run time (``BootReading``), nil where none is known.
    public init(_ read: @escaping @Sendable () -> Date, boot: @escaping @Sendable () -> BootReading? = { nil }) {
        self.read = read
        readBoot = boot
    }

    public var now: Date { read() }
    /// The kernel's boot reading, which no faked wall clock moves.
    public var boot: BootReading? { readBoot() }
    /// The system clock (which `faketime` can move for CLI tests) and the kernel's boot clock
    /// (which it cannot).
    public static let system = Clock({ Date() }, boot: { BootReading.current() })
}
