#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`): a server of N connections needs about
/// N of them. Raising it is the caller's decision (it is process-wide), never the server's.
public enum FileDescriptorLimit {
    /// Descriptors a server keeps beyond its connections: the regions' SQLite files, the gate's
    /// state, the listening socket, logs.
    public static let reserve = 64

    /// The soft limit in force now.
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to `wanted`, or to the hard limit if that is lower; returns the
    /// limit in force afterwards.
    @discardableResult
    public static func raise(toAtLeast wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let target = min(rlim_t(wanted), limit.rlim_max)
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
