#if canImport(Glibc)
import Glibc
#endif

/// The largest file this process may write (`ulimit -f`, `RLIMIT_FSIZE`): past it a write fails
/// with EFBIG (mapgate ignores SIGXFSZ).
public enum FileSizeLimit {
    /// The limit in bytes, or nil when there is none.
    public static var bytes: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }  // RLIM_INFINITY
        return UInt64(limit.rlim_cur)
    }
}
