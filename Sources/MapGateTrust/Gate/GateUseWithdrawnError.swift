import FoundationEssentials
import MapGateBase

/// A use given back (the run is being stopped) cannot be delivered any more.
public struct GateUseWithdrawnError: MapGateFailure, LocalizedError, Sendable {
    public var kind: FailureKind { .failure }
    public var errorDescription: String? { L.localized("stopping: the use was given back, so nothing more is delivered") }
}
