import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program found on `PATH` (`xdg-open URL`) with its output discarded, without
/// Foundation's `Process` (whose wait spins a run loop). Returns its exit status when `wait`,
/// else 0 once it started; nil when it could not be started.
@discardableResult
func spawn(_ arguments: [String], wait: Bool) -> Int32? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // mapgate blocks the terminating signals in every thread (SignalRouter) and ignores SIGPIPE;
    // the program started gets neither: an empty mask and the default actions.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var defaults = SignalRouter.signalSet
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    guard posix_spawnp(&pid, arguments[0], &actions, &attributes, &argv, environ) == 0 else { return nil }
    guard wait else { return 0 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { return nil }
    }
    // WIFEXITED / WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
}

/// Starts `arguments` without waiting, and calls `onExit` with its exit status (nil when it could
/// not be started or was killed) from another thread once it ends: for `xdg-open`, whose failure
/// (exit 3: no browser) must still reach the user.
func spawnWatched(_ arguments: [String], onExit: @escaping @Sendable (Int32?) -> Void) {
    do {
        try Threads.detach(name: "spawn") { onExit(spawn(arguments, wait: true)) }
    } catch {
        onExit(nil)
    }
}
