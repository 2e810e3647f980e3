import FoundationEssentials
import MapGateBase

/// A catalog the gate took in (``Gate/accept(_:)``): its signature verified by its source, not a
/// rollback, not expired, its publisher's gate rules saved. Only the gate makes one, so a use case
/// that takes it (`SyncWorkflow`) cannot run on a catalog that skipped those checks, as a
/// ``GateAuthorization`` is the proof of a use.
public struct AcceptedCatalog: Sendable {
    /// The catalog as fetched: its parsed form, its bytes and its signature.
    public let fetched: CatalogSource.Fetched

    public var catalog: Catalog { fetched.catalog }

    init(_ fetched: CatalogSource.Fetched) {
        self.fetched = fetched
    }
}
