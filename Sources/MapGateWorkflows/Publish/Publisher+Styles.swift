import FoundationEssentials
import MapGateBase
import MapGateTrust

extension Publisher {
    /// The styles of this publish: their catalog entries, what happened to each, and their packages.
    struct StyleResults {
        var entries: [CatalogFile.Style] = []
        var reports: [PublishReport.Style] = []
        /// Package names (under `packages/`) the new catalog names.
        var packages: Set<String> = []
    }

    /// Makes the package of each new style version of `INPUT_DIR/styles/` (read and checked
    /// before any region was written; a style's version names its content, so an existing
    /// package is the same bytes and is kept), and compares each with the previous catalog's entry.
    func publishStyles(_ styles: [PublishedStyle], previous: PreviousCatalog?, isDryRun: Bool, onEvent: (Event) -> Void) throws -> StyleResults {
        var results = StyleResults()
        for style in styles {
            let path = packagesPath + "/" + style.package
            var package: (size: Int64, sha256: String)?
            if FileManager.default.fileExists(atPath: path) {
                package = (FileManager.default.sizeOfItem(atPath: path), try SHA256Hasher.hex(ofFileAt: path))
            } else if !isDryRun {
                try prepareFolders()
                let compressed = try GzipDeflater.compress(style.bytes)
                try write(compressed, to: path)
                package = (Int64(compressed.count), try SHA256Hasher.hex(of: compressed))
                onEvent(.stylePacked(style: style.id, package: "packages/" + style.package, size: Int64(compressed.count)))
            }
            let entry = CatalogDocument.styleEntry(for: style, size: package?.size ?? 0, sha256: package?.sha256 ?? "", baseURL: options.baseURL)
            let old = previous?.styles[style.id]
            let action: PublishReport.Action
            if old == nil {
                action = .added
            } else if package != nil, old == entry {
                action = .unchanged
            } else {
                action = .updated
            }
            let oldVersion = old?.version
            results.entries.append(entry)
            results.packages.insert(style.package)
            results.reports.append(
                PublishReport.Style(
                    id: style.id, action: action, version: style.bundle.version, previousVersion: oldVersion == style.bundle.version ? nil : oldVersion,
                    package: "packages/" + style.package, size: package?.size, regions: style.bundle.regions))
        }
        let offered = Set(styles.map(\.id))
        for (id, entry) in (previous?.styles ?? [:]).sorted(by: { $0.key < $1.key }) where !offered.contains(id) {
            let version = entry.version
            results.reports.append(
                PublishReport.Style(id: id, action: .removed, version: version, previousVersion: version, package: nil, size: nil, regions: []))
        }
        return results
    }

    /// Style packages under `packages/` that neither `keeping` nor anything else names, relative
    /// to the output folder (a client that read the previous catalog may still be fetching its).
    func unusedStylePackages(keeping: Set<String>) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packagesPath)) ?? []
        return names.filter { $0.hasSuffix(".style.json.gz") && !keeping.contains($0) }.sorted().map { "packages/" + $0 }
    }
}
