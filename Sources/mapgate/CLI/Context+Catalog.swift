import FoundationEssentials
import MapGate

extension Context {
    /// The catalog at the user's `catalogURL` (a mirror), else the publisher's: its signature
    /// verified against the publisher's keys, then accepted by the gate (no rollback, not
    /// expired), whose state keeps the serial and the publisher's gate rules.
    func fetchCatalog() throws -> CatalogSource.Fetched {
        let source = try CatalogSource(settings: try gateSettings(), configuration: try configuration(), client: try httpClient())
        let fetched = try source.fetch()
        let gate = try makeGate()
        defer { warnAboutState(gate) }
        try gate.accept(fetched.catalog, sha256: fetched.sha256, signedBy: fetched.signature?.keyID.hex)
        return fetched
    }
}
