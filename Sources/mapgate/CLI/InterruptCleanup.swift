import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// While it lives, a signal that ends the run (``SignalRouter``) says "stopping…" and removes
/// the files a `sync` was assembling (`partial/<id>.installing.mbtiles`), once ``remove(_:hint:)``
/// named them. Resumable `.part` files stay; the installed regions are never touched (an install
/// is one `rename`). Made before the run's use (``InterruptibleUse``), so that the removal runs
/// after the use's give-back is decided, and leaves the files alone while `keeping` says an
/// install whose use was delivered is going into place; the note is said first.
final class InterruptCleanup: Sendable {
    private let paths = Locked<[String]>([])
    private let removal: SignalRouter.Registration
    private let note = Locked<SignalRouter.Registration?>(nil)
    private let console: Console

    init(console: Console, keeping: @escaping @Sendable () -> Bool) {
        self.console = console
        let paths = paths
        // Once more just before the process ends: the main thread may make one of them meanwhile.
        removal = SignalRouter.onSignal(again: true) { _ in
            guard !keeping() else { return }
            for path in paths.withLock({ $0 }) { unlink(path) }
        }
    }

    /// The files being assembled from now on; `hint` is said after "stopping…" (how to go on).
    func remove(_ files: [String], hint: String? = nil) {
        paths.withLock { $0 = files }
        let console = console
        // Registered now, the newest: said before anything else a signal does.
        let registration = SignalRouter.onSignal { _ in
            // On its own line, not glued to a progress bar's.
            console.note((console.stderrIsTTY ? "\n" : "") + L.localized("stopping…") + (hint.map { " " + $0 } ?? ""))
        }
        note.withLock { $0 = registration }
    }
}
