import FoundationEssentials
import MapGateBase

/// A publisher's style that cannot be published, installed or served, naming the style and the
/// reason (`style streets: source "land" names region "kr", which this catalog does not offer`).
public struct StyleError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let style: String
    public let reason: String
    public let kind: FailureKind

    public init(style: String, reason: String, kind: FailureKind = .badData) {
        self.style = style
        self.reason = reason
        self.kind = kind
    }

    public var errorDescription: String? { L.localized("style %1$s: %2$s", "\(style)", "\(reason)") }
}
