import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program found on `PATH` (`xdg-open URL`) with this process's environment and its
/// output discarded, as a ``ChildProcess`` (posix_spawn; the terminating signals and SIGPIPE,
/// which mapgate blocks or ignores, back to their defaults). Returns its exit status (128 + N when
/// signal N ended it) when `wait`, else 0 once it started; nil when it could not be started.
@discardableResult
func spawn(_ arguments: [String], wait: Bool) -> Int32? {
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    guard null >= 0 else { return nil }
    defer { close(null) }
    let environment = ProcessInfo.processInfo.environment
    guard
        let child = try? ChildProcess.start(
            arguments[0], arguments: arguments, environment: environment, descriptors: [STDIN_FILENO, null, null],
            defaultSignals: SignalRouter.routed + [SIGPIPE], searchingPath: true)
    else { return nil }
    return wait ? child.wait() : 0
}

/// Starts `arguments` without waiting, and calls `onExit` with its exit status (nil when it could
/// not be started) from another thread once it ends: for `xdg-open`, whose failure (exit 3: no
/// browser) must still reach the user.
func spawnWatched(_ arguments: [String], onExit: @escaping @Sendable (Int32?) -> Void) {
    do {
        try Threads.detach(name: "spawn") { onExit(spawn(arguments, wait: true)) }
    } catch {
        onExit(nil)
    }
}
