import FoundationEssentials
import MapGateBase

/// The gate's saved state was lost or damaged while map data is installed (or the record never
/// reached the store in the days map data may go without), and the lookup that must come first failed: the use is refused (not counted) until the store can be reached.
public struct GateRecoveryError: MapGateFailure, LocalizedError, Sendable {
    public let lookupError: LookupError?
    public var reason: Reason = .lostState

    /// Why a successful lookup is needed first.
    public enum Reason: Sendable, Equatable {
        /// The saved state was lost or damaged while map data was installed.
        case lostState
        /// The record never reached the store in the days map data may go without (``GatePolicy/firstLookupDays``).
        case neverReached(days: Int)
    }

    public init(lookupError: LookupError?, reason: Reason = .lostState) {
        self.lookupError = lookupError
        self.reason = reason
    }

    public var kind: FailureKind { lookupError?.kind == .badData ? .badData : .unavailable }
    public var errorDescription: String? {
        let sentence =
            switch reason {
            case .lostState:
                L.localized("the update gate's saved state was lost or damaged while map data is installed; mapgate must reach the App Store once before it can be used again")
            case .neverReached(let days):
                L.format(
                    L.localized("mapgate has not reached the App Store once in the %1$s days since the maps were first used; it must reach it once before they can be used again (connect to the internet and run 'mapgate check')"),
                    String(days))
            }
        return sentence + (lookupError.map { " (\(errorMessage($0)))" } ?? "")
    }
}
