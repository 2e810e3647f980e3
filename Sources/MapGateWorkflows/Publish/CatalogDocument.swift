import FoundationEssentials
import MapGateTrust

/// The entries of the catalog `publish` writes (``CatalogFile``, the one wire format `sync`
/// reads too): package URLs relative to the catalog, or under `--base-url`.
enum CatalogDocument {
    /// The region's entry as the catalog lists it.
    static func entry(for source: PublishSource, record: PublishedVersion, baseURL: String?) -> CatalogFile.Region {
        let deltas = record.deltas.map { delta in
            CatalogFile.Entry.valid(
                CatalogFile.Delta(
                    fromVersion: delta.fromVersion, fromHash: delta.fromHash, url: url(of: delta.package, baseURL: baseURL), size: delta.size,
                    sha256: delta.sha256))
        }
        return CatalogFile.Region(
            id: source.id, name: source.name, version: record.version, url: url(of: record.package, baseURL: baseURL), size: record.size,
            sha256: record.sha256, installedSize: record.installedSize, format: record.format, bounds: record.bounds, minzoom: record.minzoom,
            maxzoom: record.maxzoom, minimumAppVersion: source.minimumAppVersion, contentHash: record.contentHash,
            deltas: deltas.isEmpty ? nil : deltas)
    }

    /// A style's entry as the catalog lists it.
    static func styleEntry(for style: PublishedStyle, size: Int64, sha256: String, baseURL: String?) -> CatalogFile.Style {
        CatalogFile.Style(
            id: style.id, name: style.bundle.name, version: style.bundle.version, url: url(of: style.package, baseURL: baseURL), size: size,
            sha256: sha256, installedSize: Int64(style.bytes.count), regions: style.bundle.regions)
    }

    /// `packages/<name>`, relative to the catalog, or under `baseURL`.
    static func url(of package: String, baseURL: String?) -> String {
        let relative = "packages/" + package
        guard var base = baseURL else { return relative }
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/" + relative
    }
}
