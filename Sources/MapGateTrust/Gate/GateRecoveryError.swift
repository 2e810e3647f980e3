import FoundationEssentials
import MapGateBase

/// The gate's saved state was lost or damaged while map data is installed, and the lookup that
/// must come first failed: the use is refused (not counted) until the store can be reached.
public struct GateRecoveryError: MapGateFailure, LocalizedError, Sendable {
    public let lookupError: LookupError?
    public var kind: FailureKind { lookupError?.kind == .badData ? .badData : .unavailable }
    public var errorDescription: String? {
        L.localized("the update gate's saved state was lost or damaged while map data is installed; mapgate must reach the App Store once before it can be used again")
            + (lookupError.map { " (\(errorMessage($0)))" } ?? "")
    }
}
