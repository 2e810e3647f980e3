import FoundationEssentials
import MapGateBase
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// The last steps of a publish: what the new catalog says compared with the previous one, then,
/// when it changed, the catalog made, signed and written.
extension Publisher {
    /// The new catalog before it is written: its entries, what happened to each region and style,
    /// the history to keep and the files no longer needed.
    struct Draft {
        var entries: [CatalogFile.Region] = []
        var regions: [PublishReport.Region] = []
        var styles: StyleResults
        var notes: [String] = []
        var history: PublishHistory
        var removedFiles: [String] = []
    }

    /// Compares each region's version and each style with the previous catalog, keeps the newest
    /// versions in the history (not in a dry run), and gathers the notes in the order they concern
    /// the regions, then the styles.
    func compare(
        _ inputs: Inputs, versions: [PublishedVersion], deltaNotes: [String: [String]], styles: [PublishedStyle], styleResults: StyleResults,
        isDryRun: Bool
    ) -> Draft {
        var draft = Draft(styles: styleResults, history: inputs.history)
        for (source, record) in zip(inputs.sources, versions) {
            let entry = CatalogDocument.entry(for: source, record: record, baseURL: options.baseURL)
            draft.entries.append(entry)
            let old = inputs.previous?.regions[source.id]
            let action: PublishReport.Action
            if old == nil {
                action = .added
            } else if old == entry {
                action = .unchanged
            } else {
                action = .updated
            }
            let oldVersion = old?.version
            draft.notes += deltaNotes[source.id] ?? []
            if action != .unchanged, source.isVersionFromMetadata {
                draft.notes.append(
                    L.localized("region %1$s: version \"%2$s\" is the metadata \"version\" of %3$s (GDAL writes 1.1 and tippecanoe 2 there unless told otherwise); to choose it, give \"version\" for \"%4$s\" in regions.json or set the file's metadata", "\(source.id)", "\(source.version)", "\(source.fileName)", "\(source.fileName)"))
            }
            draft.regions.append(
                PublishReport.Region(
                    id: source.id, action: action, version: record.version,
                    previousVersion: oldVersion == record.version ? nil : oldVersion, package: "packages/" + record.package,
                    size: isDryRun && record.size == 0 ? nil : record.size, sha256: record.sha256.isEmpty ? nil : record.sha256,
                    installedSize: record.installedSize, deltaCount: record.deltas.count))
            if !isDryRun {
                let versions = inputs.history.regions[source.id] ?? []
                let trimmed = trim([record] + versions.filter { $0.version != record.version })
                draft.history.regions[source.id] = trimmed.kept
                draft.removedFiles += trimmed.files
                for dropped in trimmed.dropped {
                    draft.history.retired = draft.history.retired ?? [:]
                    draft.history.retired?[source.id, default: [:]][dropped.version] = dropped.sourceSHA256
                }
            }
        }
        for style in styles {
            for stack in RecommendedFonts.missingStacks(in: style.bundle.style) {
                draft.notes.append(
                    L.localized("style %1$s: labels in text-font [%2$s] use no font of %3$s (what the mapgate package recommends): users' machines without those fonts draw them in a fallback (DejaVu Sans, Noto Sans); put \"DejaVu Sans Book\" or \"Noto Sans Regular\" in the stack to choose", "\(style.id)", "\(stack.joined(separator: ", "))", "\(RecommendedFonts.packages)"))
            }
        }
        let offered = Set(inputs.sources.map(\.id))
        for (id, entry) in (inputs.previous?.regions ?? [:]).sorted(by: { $0.key < $1.key }) where !offered.contains(id) {
            let version = entry.version
            draft.regions.append(
                PublishReport.Region(
                    id: id, action: .removed, version: version, previousVersion: version, package: nil, size: nil, sha256: nil,
                    installedSize: nil, deltaCount: 0))
        }
        return draft
    }

    /// Writes the new catalog when it changed (the regions, styles or publisher, a `--serial`, or
    /// a signature that is missing or not by this key): made, checked as clients will read it,
    /// signed, then written with the history; the files no longer needed are removed last.
    /// Without a key (a dry run) or a change, nothing is written.
    func writeCatalog(_ draft: Draft, inputs: Inputs, signingKey: MinisignSecretKey?, onEvent: (Event) -> Void) throws -> PublishReport {
        let previous = inputs.previous
        let isDryRun = signingKey == nil
        let regionsChanged = draft.regions.contains { $0.action != .unchanged } || draft.styles.reports.contains { $0.action != .unchanged }
        let publisherChanged = previous.map { $0.file.publisher != options.publisher } ?? true
        var catalogChanged = regionsChanged || publisherChanged || options.serial != nil
        var notes = draft.notes
        let now = Date(timeIntervalSince1970: clock.now.timeIntervalSince1970.rounded(.down))
        // A catalog past half of its validity is signed again, with a new `expires` (found by an
        // attack: a publish run by cron with nothing new left an expired catalog, and every
        // client refused it, without a word).
        if let expires = previous?.file.expires.flatMap(ISODate.parse),
            expires.timeIntervalSince(now) < Double(options.expiresDays) * 86_400 / 2
        {
            if !catalogChanged {
                notes.append(
                    expires <= now
                        ? L.localized("the catalog expired on %1$s: signed again with a new expiry", LocalTime.text(expires))
                        : L.localized("the catalog expires on %1$s: signed again with a new expiry", LocalTime.text(expires)))
            }
            catalogChanged = true
        }
        if let signingKey, let previous, !isSigned(previous.bytes, by: signingKey) {
            catalogChanged = true
            // Another key than the last catalog's (found by an attack: one wrong --key and every
            // client refused the catalog, with no word from publish).
            if let old = previousSigner(), old != signingKey.publicKey.keyID.hex {
                notes.append(
                    L.localized(
                        "signed by key %1$s, the previous catalog by key %2$s: clients that trust only %2$s will refuse this catalog (list both keys in trustedKeys while rotating)",
                        signingKey.publicKey.keyID.hex, old))
            }
        } else if !catalogChanged, !FileManager.default.fileExists(atPath: signaturePath) {
            catalogChanged = true
        }
        // checkInputs refused a previous serial with no room after it.
        let serial = catalogChanged ? (options.serial ?? min(previous?.serial ?? 0, PublishOptions.maximumSerial - 1) + 1) : previous?.serial
        guard catalogChanged, let signingKey, let serial else {
            return PublishReport(
                regions: draft.regions, styles: draft.styles.reports, catalogChanged: catalogChanged, serial: serial, isDryRun: isDryRun,
                removedFiles: [], notes: notes)
        }

        // A publisher's `gate` rules and a catalog-wide `minimumAppVersion` are not publish's to
        // manage: carried over from the previous catalog as they were.
        let document = CatalogFile(
            publisher: options.publisher, generated: ISODate.string(now),
            expires: ISODate.string(now.addingTimeInterval(Double(options.expiresDays) * 86_400)), serial: serial,
            minimumAppVersion: previous?.file.minimumAppVersion, gate: previous?.file.gate, regions: draft.entries, styles: draft.styles.entries)
        let bytes = try document.encoded()
        // What clients will do with it: refuse it if mapgate's own reader would.
        _ = try Catalog.parse(bytes, sourceURL: URL(fileURLWithPath: catalogPath).absoluteString)
        let signature = try signingKey.sign(
            message: bytes, trustedComment: "timestamp:\(Int64(now.timeIntervalSince1970))\tfile:catalog.json\tserial:\(serial)")
        onEvent(.signed(serial: serial))
        try prepareFolders()
        // The packages are in place and on disk (moveIntoPlace fsyncs their folder); then the
        // history, the signature and the catalog last, each fsynced with its folder. Between the
        // last two renames a client sees the new signature with the old catalog: it fetches the
        // pair again a moment later (CatalogSource.fetch), never accepts it.
        try write(draft.history.encoded(), to: historyPath)
        try write(Data(signature.utf8), to: signaturePath)
        try write(bytes, to: catalogPath)
        let removedFiles = draft.removedFiles + unusedStylePackages(keeping: draft.styles.packages.union(previous?.stylePackages ?? []))
        // Each a file of `packages/` or `.publish/bases/` (the history's names are checked when
        // it is read): removed with unlink, never a folder's contents.
        for file in removedFiles where file.split(separator: "/", omittingEmptySubsequences: false).allSatisfy({ PublishHistory.isPlainFileName(String($0)) }) {
            _ = unlink(options.outputDirectory + "/" + file)
        }
        onEvent(.written(catalog: catalogPath, removedFiles: removedFiles))
        return PublishReport(
            regions: draft.regions, styles: draft.styles.reports, catalogChanged: true, serial: serial, isDryRun: false, removedFiles: removedFiles,
            notes: notes)
    }

    /// The id (hex) of the key that signed the catalog now in place, if its signature reads.
    private func previousSigner() -> String? {
        guard let signature = FileManager.default.contents(atPath: signaturePath) else { return nil }
        return (try? MinisignSignature(data: signature))?.keyID.hex
    }

    private func isSigned(_ bytes: Data, by key: MinisignSecretKey) -> Bool {
        guard let signature = FileManager.default.contents(atPath: signaturePath) else { return false }
        return (try? MinisignVerifier(trustedKeys: [key.publicKey]).verify(signatureFile: signature, message: bytes)) != nil
    }

    /// Keeps the newest ``PublishOptions/keep`` versions; returns them, the files (relative to the
    /// output folder) of the others and of deltas from versions no longer kept, and the others.
    private func trim(_ versions: [PublishedVersion]) -> (kept: [PublishedVersion], files: [String], dropped: [PublishedVersion]) {
        var kept = Array(versions.prefix(options.keep))
        var files: [String] = []
        for dropped in versions.dropFirst(options.keep) {
            files.append("packages/" + dropped.package)
            files += dropped.deltas.map { "packages/" + $0.package }
            if let base = dropped.base { files.append(".publish/bases/" + base) }
        }
        let keptVersions = Set(kept.map(\.version))
        for index in kept.indices {
            let (stay, go) = (kept[index].deltas.filter { keptVersions.contains($0.fromVersion) }, kept[index].deltas.filter { !keptVersions.contains($0.fromVersion) })
            files += go.map { "packages/" + $0.package }
            kept[index].deltas = stay
            // With keep 1 no delta will ever be made from this version: its base is not needed.
            if options.keep < 2, let base = kept[index].base {
                files.append(".publish/bases/" + base)
                kept[index].base = nil
            }
        }
        return (kept, files, Array(versions.dropFirst(options.keep)))
    }
}
