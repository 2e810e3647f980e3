import CLinux
import FoundationEssentials
import Glibc

/// A program started with `posix_spawn` (not Foundation's `Process`, whose wait spins a run loop),
/// with chosen descriptors as its standard input, output and error, an empty signal mask and the
/// default action for `defaultSignals`: what system mode's service starts for each request, and
/// the programs the commands start (`xdg-open`).
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// Starts `executable` with `arguments` (the first is its name) and exactly `environment`.
    /// `descriptors` become its descriptors 0, 1, 2 (its standard streams) and on; nothing else
    /// is inherited (every descriptor mapgate opens is close-on-exec). With `searchingPath`, an
    /// `executable` without a slash is looked for on this process's `PATH` (`posix_spawnp`).
    public static func start(
        _ executable: String, arguments: [String], environment: [String: String], descriptors: [Int32], defaultSignals: [Int32],
        searchingPath: Bool = false
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // A source among the targets would be overwritten (or, as its own target, keep its
        // close-on-exec flag): copies above them first, closed once the child has its own.
        var copies: [Int32] = []
        defer { copies.forEach { close($0) } }
        for (target, original) in descriptors.enumerated() {
            var source = original
            if source < Int32(descriptors.count) {
                source = fcntl(source, F_DUPFD_CLOEXEC, 16)
                guard source >= 0 else { throw POSIXError(POSIXError.Code(rawValue: errno) ?? .EBADF) }
                copies.append(source)
            }
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in defaultSignals { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own process group: a signal for the service's group is not the request's.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result =
            searchingPath
            ? posix_spawnp(&pid, executable, &actions, &attributes, &argv, &envp) : posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        guard result == 0 else { throw POSIXError(POSIXError.Code(rawValue: result) ?? .EIO) }
        return ChildProcess(pid: pid)
    }

    /// A descriptor that becomes readable when the process ends (`pidfd_open`), for `poll`.
    public func endDescriptor() -> Int32 { clinux_pidfd_open(pid) }

    /// Sends `signal`; the process may have ended already (then nothing happens: it is not reaped
    /// before ``wait()``, so its pid cannot be another's).
    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the end and reaps it: the exit status, or 128 + the signal that ended it.
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 128 }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros: exited normally when the low 7 bits are 0.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
