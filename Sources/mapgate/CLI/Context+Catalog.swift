import FoundationEssentials
import MapGate

private typealias L = Localization

extension Context {
    /// The catalog at the user's `catalogURL` (a mirror), else the publisher's: its signature
    /// verified against the publisher's keys, then accepted by the gate (no rollback, not
    /// expired), whose state keeps the serial and the publisher's gate rules.
    /// The catalog's URL (the user's `catalogURL`, else the publisher's) and how it is trusted
    /// (the policy's keys and whether a signature is required).
    /// - Parameter mirror: the base URL of a mirror (``MirrorLayout``) to read instead.
    func catalogSource(mirror: String? = nil) throws -> CatalogSource {
        let settings = try gateSettings()
        guard let url = try mirror.map({ $0 + "/" + MirrorLayout.catalogName }) ?? configuration().catalogURL ?? settings.catalogURL else {
            throw GeneralFailure(L.localized("no catalog: set catalogURL in the configuration"), kind: .usage)
        }
        return CatalogSource(url: url, trustedKeys: settings.trustedKeys, requiresSignature: settings.requireSignedCatalog, client: try httpClient())
    }

    /// The catalog, checked and accepted by the gate. From a mirror, it is checked exactly as the
    /// publisher's, then each region's package is read from the mirror (``Catalog/mirrored(at:manifest:)``).
    func fetchCatalog(mirror: String? = nil) throws -> AcceptedCatalog {
        let source = try catalogSource(mirror: mirror)
        var fetched: CatalogSource.Fetched
        do {
            fetched = try source.fetch()
        } catch let error where mirror == nil && (error as? any MapGateFailure)?.kind == .unavailable {
            // The publisher out of reach: what works without it (found by an attack: the user
            // offline was given curl's words and no way on).
            throw GeneralFailure(
                errorMessage(error)
                    + L.localized(
                        "; without the network, 'mapgate catalog --saved' lists the catalog the last sync kept, and 'mapgate sync --from DIR' installs from a mirror (a stick written by 'mapgate mirror')"
                    ), kind: .unavailable)
        }
        if let mirror {
            let target = mirror + "/" + MirrorLayout.manifestName
            // One that cannot be taken as a manifest (over 8 MiB) is as good as a damaged one (below).
            var unusable: GeneralFailure?
            let held: Data?
            do {
                held = try source.fetchFileIfPresent(target, limit: MirrorManifest.maximumBytes, what: L.localized("mirror manifest"))
            } catch let error as GeneralFailure where error.kind == .badData {
                unusable = error
                held = nil
            } catch let error as SharedLibraryError {
                throw error
            } catch {
                // Not read (a link that dropped or stalled on it, a file the folder will not
                // give): as good as missing (found by an attack: a mirror over HTTP whose
                // manifest was cut off failed the whole sync, 69, its signed catalog read).
                unusable = GeneralFailure(errorMessage(error), kind: .unavailable)
                held = nil
            }
            let manifest: MirrorManifest
            // A folder's packages are seen at once: one without its file is not in the mirror.
            let folder = URL(string: mirror).flatMap { $0.isFileURL ? $0.path : nil }
            let holds = { (sha256: String) in folder.map { FileManager.default.fileExists(atPath: $0 + "/" + MirrorLayout.packageName(sha256: sha256)) } ?? true }
            var decoded: MirrorManifest?
            if let held {
                do {
                    decoded = try MirrorManifest.decode(held, source: target)
                } catch let damaged as MirrorManifest.Damaged {
                    // Damaged (cut short, edited): as good as missing, since it only says where to
                    // look (found by an attack: a truncated mirror.json refused a whole stick
                    // whose signed catalog and packages were all intact, exit 65).
                    console.warning(L.localized("%1$s; each package is looked for by its hash in the signed catalog", damaged.message))
                }
            } else if let unusable {
                console.warning(L.localized("%1$s; each package is looked for by its hash in the signed catalog", unusable.message))
            } else {
                // None (removed, or lost): the signed catalog is all a reader needs; the packages
                // are looked for by its hashes, each checked as always (found by an attack: the
                // whole stick was refused, its catalog and packages all there).
                console.warning(L.localized("%1$s is missing: each package is looked for by its hash in the signed catalog", target))
            }
            if let decoded, decoded.catalogSHA256.lowercased() != fetched.sha256.lowercased() {
                // A manifest of another catalog (a mirror cut short while written): the packages
                // are looked for by the signed catalog's hashes, each checked as always.
                console.warning(
                    L.localized(
                        "%1$s was written for another catalog than the one beside it (a mirror cut short while it was written): each package is looked for by its hash",
                        target))
                manifest = MirrorManifest.everything(in: fetched.catalog, catalogSHA256: fetched.sha256, written: decoded.written, holds: holds)
            } else if let decoded, folder != nil {
                // A folder's files are seen at once: a package there under its hash is used even
                // when the manifest leaves it out (found by an attack: a manifest that decoded but
                // listed nothing made every region on an intact stick "not in the mirror").
                manifest = decoded.including(MirrorManifest.everything(in: fetched.catalog, catalogSHA256: fetched.sha256, written: decoded.written, holds: holds))
            } else {
                manifest = decoded ?? MirrorManifest.everything(in: fetched.catalog, catalogSHA256: fetched.sha256, written: "", holds: holds)
            }
            fetched.catalog = fetched.catalog.mirrored(at: mirror, manifest: manifest)
        }
        // The catalog alone makes no data directory (`catalog --data-dir typo`); sync makes it.
        let gate = try makeGate(createsDataDirectory: false)
        defer { warnAboutState(gate) }
        return try gate.accept(fetched)
    }
}
