import CLinux

#if canImport(Glibc)
import Glibc
#endif

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

    /// Nanoseconds of the C library's `CLOCK_MONOTONIC` (no system call: the vDSO), which a
    /// preloaded library can move: only for how long an answer took, as logs and metrics show
    /// it, read twice for each request a server answers (the system call took 3 % of an answer;
    /// issue 42). Never for a deadline or the gate: those are ``nanoseconds``.
    public static var shownNanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Nanoseconds from `start` to `now`, both readings of this clock; 0 when `start` is the
    /// later one (read by another thread after `now` was: a plain subtraction would overflow).
    public static func elapsed(from start: UInt64, to now: UInt64) -> UInt64 {
        now > start ? now - start : 0
    }
}
