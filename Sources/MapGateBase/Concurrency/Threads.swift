import CLinux
import FoundationEssentials
import Glibc

/// Threads and sleeping on pthreads: what mapgate took from Foundation's `Thread` (Foundation,
/// with ICU, is not linked). Locks: ``PthreadLock``, ``PthreadCondition``.
public enum Threads {
    /// A thread could not be started (the process or the user reached `RLIMIT_NPROC`, the unit's
    /// `TasksMax`, or memory ran out).
    public struct StartError: MapGateFailure, LocalizedError, Sendable {
        public let name: String?
        public let reason: String
        public var kind: FailureKind { .unavailable }
        public var errorDescription: String? { L.localized("cannot start a thread%1$s: %2$s", "\(name.map { " (\($0))" } ?? "")", "\(reason)") }
    }

    /// Runs `body` on a new detached thread (`Thread.detachNewThread`), named `name` when given
    /// (`pthread_setname_np`, as `Thread.name` did). Throws ``StartError`` when none can be started.
    public static func detach(name: String? = nil, _ body: @escaping @Sendable () -> Void) throws {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
                if let name = start.name { _ = clinux_set_thread_name(name) }
                start.body()
                return nil
            }, start)
        if result != 0 {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            throw StartError(name: name, reason: SystemErrorReason.text(result))
        }
    }

    /// Blocks the calling thread for `seconds` (`Thread.sleep(forTimeInterval:)`).
    public static func sleep(_ seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

private final class ThreadStart {
    let name: String?
    let body: @Sendable () -> Void
    init(name: String?, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
