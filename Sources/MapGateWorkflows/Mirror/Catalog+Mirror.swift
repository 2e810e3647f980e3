import FoundationEssentials
import MapGateBase
import MapGateTrust

extension Catalog {
    /// This catalog as read from the mirror at `base`: each region and style the mirror holds
    /// (its manifest names it with the catalog's own SHA-256) is downloaded from the mirror's
    /// `packages/SHA256`; the others are ``absent`` (regions) or dropped (styles). Of a region's
    /// deltas, only those the mirror carries are kept (a region updated by a delta on the machine
    /// that wrote the mirror is carried as that delta alone).
    public func mirrored(at base: String, manifest: MirrorManifest) -> Catalog {
        var copy = self
        copy.sourceURL = base + "/" + MirrorLayout.catalogName
        let heldRegions = Set(manifest.regions.map { "\($0.id) \($0.sha256)" })
        let heldStyles = Set(manifest.styles.map { "\($0.id) \($0.sha256)" })
        // The reasons come from the stick's `mirror.json`, text from outside: one line each (found by
        // an attack: a reason holding a line break forged a line of `sync`'s output).
        // At most 200 characters each, and said as the mirror's (found by an attack: a 7 MB reason
        // was printed whole, and read as mapgate's own advice).
        let reasons = Dictionary(manifest.leftOut.map { ($0.id, $0.reason) }, uniquingKeysWith: { first, _ in first })
        func leftOut(_ region: CatalogRegion) -> String? {
            guard let reason = reasons[region.id] else { return nil }
            // mapgate's own words in the user's language (``MirrorLeftOut/readerText(ofManifestText:region:)``);
            // others counted in code points: a character can hold any number of them (found by an
            // attack: one letter with three million accents passed a cap of characters).
            return L.localized(
                "the mirror says: %1$s", MirrorLeftOut.readerText(ofManifestText: reason, region: region) ?? TerminalText.capped(TerminalText.inline(reason), codePoints: 200))
        }
        let heldDeltas = Set(manifest.deltas.map { "\($0.id) \($0.sha256)" })
        copy.regions = []
        for var region in regions {
            region.deltas = region.deltas.filter { heldDeltas.contains("\(region.id) \($0.sha256)") }.map { delta in
                var delta = delta
                delta.url = base + "/" + MirrorLayout.packageName(sha256: delta.sha256)
                return delta
            }
            guard heldRegions.contains("\(region.id) \(region.sha256)") || !region.deltas.isEmpty else {
                copy.absent[region.id] = L.localized("not in the mirror at %1$s", CatalogSource.shown(base)) + (leftOut(region).map { " (\($0))" } ?? "")
                copy.absentNames[region.id] = region.name
                continue
            }
            // A region carried only as a delta: its full package is not there, which a machine
            // without the delta's base, or whose delta fails, is told instead of a missing file.
            region.url = base + "/" + MirrorLayout.packageName(sha256: region.sha256)
            if !heldRegions.contains("\(region.id) \(region.sha256)") {
                let from = region.deltas.map(\.fromVersion).joined(separator: ", ")
                region.fullPackageAbsence = L.localized("the mirror at %1$s carries only its delta from %2$s, not the full package", base, from)
                    + (leftOut(region).map { " (\($0))" } ?? "")
            }
            copy.regions.append(region)
        }
        copy.styles = self.styles.compactMap { style in
            guard heldStyles.contains("\(style.id) \(style.sha256)") else { return nil }
            var style = style
            style.url = base + "/" + MirrorLayout.packageName(sha256: style.sha256)
            return style
        }
        return copy
    }
}
