import FoundationEssentials

/// A catalog that cannot be used. Raised before anything is downloaded.
public struct CatalogError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let source: String
    /// The region concerned, when there is one.
    public let region: String?
    public let reason: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? {
        if let region { return "catalog \(source): region \(region): \(reason)" }
        return "catalog \(source): \(reason)"
    }
}
