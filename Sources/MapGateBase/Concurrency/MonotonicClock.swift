import CLinux

/// Real elapsed time, as the kernel counts it (`CLOCK_BOOTTIME`, read by a system call).
///
/// The wall clock is the user's to set, and a preloaded library (libfaketime) can speed up, slow
/// down or freeze every clock a program reads through the C library, the monotonic one included.
/// This reading goes around the C library, so no such library changes it; it keeps counting while
/// the machine sleeps. Use it for how long something has run, never for dates.
public enum MonotonicClock {
    /// Nanoseconds since boot.
    public static var nanoseconds: UInt64 { clinux_boottime_ns() }

    /// Seconds since boot.
    public static var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Nanoseconds from `start` to `now`, both readings of this clock; 0 when `start` is the
    /// later one (read by another thread after `now` was: a plain subtraction would overflow).
    public static func elapsed(from start: UInt64, to now: UInt64) -> UInt64 {
        now > start ? now - start : 0
    }
}
