#if canImport(Glibc)
import Glibc
#endif
import MapGate
import Synchronization

/// Standard input, output and error as the process found them. One that was closed at start
/// (`mapgate tile … >&-`) is opened on `/dev/null` before anything else opens a file: else the
/// first file opened (the state database) would take its number, and writing "standard output"
/// would write into it. Output meant for a stream that was closed is an error, not a success.
enum StandardStreams {
    /// The descriptors among 0, 1 and 2 that were closed when the process started.
    nonisolated(unsafe) private(set) static var closedAtStart: Set<Int32> = []

    /// Call first thing in `main`, once, before any thread starts.
    static func secure() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            closedAtStart.insert(descriptor)
            let opened = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }

    static var isOutputClosed: Bool { closedAtStart.contains(STDOUT_FILENO) }

    /// The first error a write to standard output failed with (0: none), other than a closed pipe.
    private static let outputErrno = Atomic<Int32>(0)

    /// Notes that a write to standard output failed with `code` (errno); a closed pipe is not noted.
    static func noteOutputFailure(_ code: Int32) {
        guard code != EPIPE else { return }
        _ = outputErrno.compareExchange(expected: 0, desired: code, ordering: .relaxed)
    }

    /// Why output to standard output was lost, in the user's language; nil when none was.
    static var outputFailure: String? {
        let code = outputErrno.load(ordering: .relaxed)
        return code == 0 ? nil : SystemErrorReason.text(code)
    }
}
