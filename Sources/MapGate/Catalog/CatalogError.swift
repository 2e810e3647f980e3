import FoundationEssentials

/// A catalog that cannot be used. Raised before anything is downloaded.
public struct CatalogError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let source: String
    /// The region concerned, when there is one.
    public let region: String?
    public let reason: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? {
        if let region { return L.localized("catalog %1$s: region %2$s: %3$s", "\(source)", "\(region)", "\(reason)") }
        return L.localized("catalog %1$s: %2$s", "\(source)", "\(reason)")
    }
}
