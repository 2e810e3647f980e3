import FoundationEssentials
import MapGateBase

/// A catalog that cannot be used. Raised before anything is downloaded.
public struct CatalogError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let source: String
    /// The region concerned, when there is one.
    public let region: String?
    public let reason: String

    /// The memberwise initializer, written out for the targets above (a saved catalog, in Regions).
    package init(source: String, region: String?, reason: String) {
        self.source = source
        self.region = region
        self.reason = reason
    }

    public var kind: FailureKind { .badData }
    public var errorDescription: String? {
        if let region { return L.localized("catalog %1$s: region %2$s: %3$s", CatalogSource.shown(source), "\(region)", "\(reason)") }
        return L.localized("catalog %1$s: %2$s", CatalogSource.shown(source), "\(reason)")
    }
}
