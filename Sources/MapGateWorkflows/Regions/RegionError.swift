import FoundationEssentials
import MapGateBase

/// A region that could not be synced, installed, removed or verified: names the region and the
/// reason (`region kr-seoul: download failed: HTTP 503 from https://… (after 4 tries)`).
public struct RegionError: MapGateFailure, LocalizedError, Sendable {
    public let region: String
    public let reason: String
    public let kind: FailureKind

    public init(region: String, reason: String, kind: FailureKind) {
        self.region = region
        self.reason = reason
        self.kind = kind
    }

    public var errorDescription: String? { L.localized("region %1$s: %2$s", "\(region)", "\(reason)") }
}
