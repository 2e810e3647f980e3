import FoundationEssentials
import MapGate

extension Context {
    /// The catalog at the user's `catalogURL` (a mirror), else the publisher's: its signature
    /// verified against the publisher's keys, then accepted by the gate (no rollback, not
    /// expired), whose state keeps the serial and the publisher's gate rules.
    /// The catalog's URL (the user's `catalogURL`, else the publisher's) and how it is trusted
    /// (the policy's keys and whether a signature is required).
    func catalogSource() throws -> CatalogSource {
        let settings = try gateSettings()
        guard let url = try configuration().catalogURL ?? settings.catalogURL else {
            throw GeneralFailure("no catalog: set catalogURL in the configuration", kind: .usage)
        }
        return CatalogSource(url: url, trustedKeys: settings.trustedKeys, requiresSignature: settings.requireSignedCatalog, client: try httpClient())
    }

    func fetchCatalog() throws -> CatalogSource.Fetched {
        let source = try catalogSource()
        let fetched = try source.fetch()
        let gate = try makeGate()
        defer { warnAboutState(gate) }
        try gate.accept(fetched.catalog, sha256: fetched.sha256, signedBy: fetched.signature?.keyID.hex)
        return fetched
    }
}
