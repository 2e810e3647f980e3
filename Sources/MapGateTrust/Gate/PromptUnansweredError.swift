import FoundationEssentials
import MapGateBase

/// The update prompt got no answer it could read: the end of input (Ctrl-D, a closed terminal)
/// or ``PromptAnswer/attempts`` answers not understood. The command does not run and no use is
/// counted (exit 75: try again).
public struct PromptUnansweredError: MapGateFailure, LocalizedError, Sendable {
    public init() {}
    public var kind: FailureKind { .noAnswer }
    public var errorDescription: String? {
        L.localized("the update prompt got no answer (u: update now, l: later); nothing was done and no use was counted")
    }
}
