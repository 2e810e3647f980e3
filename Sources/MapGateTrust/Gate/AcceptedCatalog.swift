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

    /// A catalog of another signing key, published later than this one, accepted before (a
    /// publisher rotating keys, and this one kept or on a stick): ``SyncWorkflow`` takes from it
    /// only what is not installed, and does not save it (found by an attack: an old stick of the
    /// old key put version 1 back over version 2, and cost a use).
    public let newerAccepted: NewerCatalog?

    public struct NewerCatalog: Sendable, Equatable {
        public let keyID: String
        public let serial: Int64
        public let generated: Date
    }

    init(_ fetched: CatalogSource.Fetched, newerAccepted: NewerCatalog?) {
        self.fetched = fetched
        self.newerAccepted = newerAccepted
    }
}
