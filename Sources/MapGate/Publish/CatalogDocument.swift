import FoundationEssentials

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

/// The catalog already in the output folder, as `publish` left it last time.
struct PreviousCatalog {
    var file: CatalogFile
    var bytes: Data
    /// Each region's entry by id.
    var regions: [String: CatalogFile.Region]
    /// Each style's entry by id.
    var styles: [String: CatalogFile.Style]
    var serial: Int64? { file.serial }
    /// The style packages it names (under `packages/`).
    var stylePackages: Set<String> {
        Set(styles.values.compactMap { $0.url.split(separator: "/").last.map(String.init) })
    }

    static func load(path: String) throws -> PreviousCatalog? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PublishError(path, "cannot read it: \(errorMessage(error))", kind: .io)
        }
        guard let file = try? JSONDecoder().decode(CatalogFile.self, from: bytes) else {
            throw PublishError(path, "not a catalog mapgate can read (move it away to publish afresh)")
        }
        let regions = file.regions.compactMap(\.value)
        let styles = (file.styles ?? []).compactMap(\.value)
        return PreviousCatalog(
            file: file, bytes: bytes, regions: Dictionary(regions.map { ($0.id, $0) }) { first, _ in first },
            styles: Dictionary(styles.map { ($0.id, $0) }) { first, _ in first })
    }
}
