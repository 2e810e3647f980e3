import FoundationEssentials
import MapGateBase

/// The update prompt got no answer it could read: the end of input (Ctrl-D, a closed terminal)
/// or ``PromptAnswer/attempts`` answers not understood; or it could not be asked, the terminal
/// on standard input being another program's (`detached`). The command does not run and no use
/// is counted (exit 75: try again).
public struct PromptUnansweredError: MapGateFailure, LocalizedError, Sendable {
    /// The terminal on standard input is not this run's to read (started with `setsid` at a shell).
    public let detached: Bool

    public init(detached: Bool = false) {
        self.detached = detached
    }

    public var kind: FailureKind { .noAnswer }
    public var errorDescription: String? {
        if detached {
            return L.localized(
                "the update prompt cannot be answered: the terminal on standard input belongs to another program (was mapgate started with setsid?); run it in the terminal's foreground; nothing was done and no use was counted")
        }
        return L.localized("the update prompt got no answer (u: update now, l: later); nothing was done and no use was counted")
    }
}
