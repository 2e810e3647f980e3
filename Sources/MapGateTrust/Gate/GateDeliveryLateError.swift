import FoundationEssentials
import MapGateBase

/// A delivery that could not be told to the record before its deadline (the state database was
/// busy that long): whoever asked for it has stopped waiting, so nothing was delivered and the use
/// is not kept (``GateAuthorization/deliver(before:_:)``).
public struct GateDeliveryLateError: MapGateFailure, LocalizedError, Sendable {
    public var kind: FailureKind { .unavailable }
    public var errorDescription: String? {
        L.localized("the gate's record could not be told of the use in time (its state database was busy), so nothing was delivered and no use is counted")
    }
}
