import Dispatch
import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// On SIGINT or SIGTERM, removes the files a `sync` was assembling (`partial/<id>.installing.mbtiles`)
/// gives back the run's gate use if nothing was delivered yet (`onInterrupt`), and exits with 128 +
/// the signal, as a shell would report it. Resumable `.part` files stay; the installed regions are
/// never touched (an install is one `rename`).
final class InterruptCleanup {
    private let sources: [any DispatchSourceSignal]

    /// - Parameter hint: said after "stopping…" (how to go on).
    init(removing paths: [String], console: Console, hint: String? = nil, onInterrupt: @escaping @Sendable () -> Void = {}) {
        for number in [SIGINT, SIGTERM] { signal(number, SIG_IGN) }
        sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                // On its own line, not glued to a progress bar's.
                console.note((console.stderrIsTTY ? "\n" : "") + L.localized("stopping…") + (hint.map { " " + $0 } ?? ""))
                for path in paths { unlink(path) }
                onInterrupt()
                _exit(128 + number)  // at once: no atexit handlers while other threads still run
            }
            source.resume()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }
}
