import CLinux
import FoundationEssentials

/// Which boot of the machine this is and how long it has run, as the kernel says: no preloaded
/// library (libfaketime) changes either. On the same boot, at least that much real time has passed
/// between two readings, whatever the wall clock says (``GatePolicy/advanceClock(_:reading:boot:)``).
public struct BootReading: Sendable, Equatable {
    /// `/proc/sys/kernel/random/boot_id`: new at every boot.
    public var id: String
    /// `CLOCK_BOOTTIME` by system call: seconds since the boot, suspend included.
    public var seconds: Double

    public init(id: String, seconds: Double) {
        self.id = id
        self.seconds = seconds
    }

    /// The reading now, or nil where the kernel does not tell it.
    public static func current() -> BootReading? {
        guard let file = UnixFile(forReadingAtPath: "/proc/sys/kernel/random/boot_id"),
            let data = try? file.read(upToCount: 64),
            case let id = String(decoding: data, as: UTF8.self).trimmingWhitespaceAndNewlines(), id.count == 36
        else { return nil }
        let nanoseconds = clinux_boottime_ns()
        guard nanoseconds > 0 else { return nil }
        return BootReading(id: id, seconds: Double(nanoseconds) / 1e9)
    }
}
