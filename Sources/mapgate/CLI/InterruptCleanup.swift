import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// While it lives, a signal that ends the run (``SignalRouter``) says "stopping…" and removes
/// the files a `sync` was assembling (`partial/<id>.installing.mbtiles`). Resumable `.part`
/// files stay; the installed regions are never touched (an install is one `rename`). The gate's
/// use is given back by ``InterruptibleUse``, registered before this one and so run after it.
final class InterruptCleanup {
    private let removal: SignalRouter.Registration
    private let note: SignalRouter.Registration

    /// - Parameter hint: said after "stopping…" (how to go on).
    init(removing paths: [String], console: Console, hint: String? = nil) {
        // Removed first, and again just before the process ends: the main thread may make one
        // of them meanwhile (``SignalRouter``).
        removal = SignalRouter.onSignal(again: true) { _ in
            for path in paths { unlink(path) }
        }
        // Registered after, so said before the removal.
        note = SignalRouter.onSignal { _ in
            // On its own line, not glued to a progress bar's.
            console.note((console.stderrIsTTY ? "\n" : "") + L.localized("stopping…") + (hint.map { " " + $0 } ?? ""))
        }
    }
}
