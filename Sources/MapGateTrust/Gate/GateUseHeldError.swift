import FoundationEssentials
import MapGateBase

/// The gate is closed only by the last use another run holds undelivered: its update question
/// is not answered yet, its command (a sync's download) still runs, or a system-mode session
/// has not had its first tile. That use may yet
/// be given back, so this run is refused without counting anything, and told to try again
/// rather than that the gate is closed (exit 75).
public struct GateUseHeldError: MapGateFailure, LocalizedError, Sendable {
    /// The processes holding the uses (pids).
    public let processes: [Int32]

    public var kind: FailureKind { .useHeld }

    public var errorDescription: String? {
        L.localized(
            "the last use before the update is held by another mapgate run that has not finished with it (process %1$s: an update question not answered yet, or a command still running); it comes back if that run is declined or stopped: try again once it ends; nothing was done and no use was counted",
            processes.map(String.init).joined(separator: ", "))
    }
}
