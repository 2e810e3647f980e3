import FoundationEssentials

/// The catalog `publish` writes, as deterministic JSON: keys sorted, regions sorted by id,
/// two-space indentation and `"key" : value` as Foundation's pretty printer wrote them (``JSONValue``),
/// slashes unescaped, a final newline.
enum CatalogDocument {
    /// The catalog keys `publish` does not manage, carried over from the previous catalog as they
    /// were (a publisher's `gate` rules, a catalog-wide `minimumAppVersion`).
    static let carriedKeys = ["gate", "minimumAppVersion"]

    /// The region's entry as the catalog lists it.
    static func entry(for source: PublishSource, record: PublishedVersion, baseURL: String?) -> [String: Any] {
        var entry: [String: Any] = [
            "id": source.id, "name": source.name, "version": record.version, "url": url(of: record.package, baseURL: baseURL),
            "size": record.size, "sha256": record.sha256, "installedSize": record.installedSize, "format": record.format,
            "minzoom": record.minzoom, "maxzoom": record.maxzoom, "contentHash": record.contentHash,
        ]
        if let bounds = record.bounds { entry["bounds"] = bounds }
        if let minimum = source.minimumAppVersion { entry["minimumAppVersion"] = minimum }
        if !record.deltas.isEmpty {
            entry["deltas"] = record.deltas.map { delta -> [String: Any] in
                [
                    "fromVersion": delta.fromVersion, "fromHash": delta.fromHash, "url": url(of: delta.package, baseURL: baseURL),
                    "size": delta.size, "sha256": delta.sha256,
                ]
            }
        }
        return entry
    }

    /// A style's entry as the catalog lists it.
    static func styleEntry(for style: PublishedStyle, size: Int64, sha256: String, baseURL: String?) -> [String: Any] {
        [
            "id": style.id, "name": style.bundle.name, "version": style.bundle.version, "url": url(of: style.package, baseURL: baseURL),
            "size": size, "sha256": sha256, "installedSize": style.bytes.count, "regions": style.bundle.regions,
        ]
    }

    /// `packages/<name>`, relative to the catalog, or under `baseURL`.
    static func url(of package: String, baseURL: String?) -> String {
        let relative = "packages/" + package
        guard var base = baseURL else { return relative }
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/" + relative
    }

    static func document(
        publisher: String, generated: Date, expires: Date, serial: Int64, regions: [[String: Any]], styles: [[String: Any]] = [],
        carried: [String: Any]
    ) -> [String: Any] {
        var document = carried.filter { carriedKeys.contains($0.key) }
        document["formatVersion"] = 1
        document["publisher"] = publisher
        document["generated"] = ISODate.string(generated)
        document["expires"] = ISODate.string(expires)
        document["serial"] = serial
        document["regions"] = regions.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        if !styles.isEmpty { document["styles"] = styles.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") } }
        return document
    }

    static func encode(_ object: Any) throws -> Data {
        var data = try JSONValue.encode(object, [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        data.append(0x0A)
        return data
    }

    /// A form in which two equal values give equal bytes, however their numbers were typed.
    static func canonical(_ object: Any) -> Data? {
        guard let first = try? JSONValue.encode(object, [.sortedKeys]), let parsed = try? JSONValue(parsing: first) else { return nil }
        return try? parsed.encoded([.sortedKeys])
    }
}

/// The catalog already in the output folder, as `publish` left it last time.
struct PreviousCatalog {
    var object: [String: JSONValue]
    var bytes: Data
    var serial: Int64?
    /// Each region's entry by id.
    var regions: [String: [String: JSONValue]]
    /// Each style's entry by id.
    var styles: [String: [String: JSONValue]] = [:]
    /// The style packages it names (under `packages/`).
    var stylePackages: Set<String> {
        Set(styles.values.compactMap { $0["url"]?.stringValue?.split(separator: "/").last.map(String.init) })
    }

    static func load(path: String) throws -> PreviousCatalog? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PublishError(path, "cannot read it: \(errorMessage(error))", kind: .io)
        }
        guard let object = (try? JSONValue(parsing: bytes))?.objectValue, let list = object["regions"]?.arrayValue,
            case let entries = list.compactMap(\.objectValue), entries.count == list.count
        else {
            throw PublishError(path, "not a catalog mapgate can read (move it away to publish afresh)")
        }
        var regions: [String: [String: JSONValue]] = [:]
        for entry in entries {
            if let id = entry["id"]?.stringValue { regions[id] = entry }
        }
        let serial = object["serial"]?.double.flatMap { Int64(exactly: $0) }
        var styles: [String: [String: JSONValue]] = [:]
        for entry in object["styles"]?.arrayValue ?? [] {
            if let fields = entry.objectValue, let id = fields["id"]?.stringValue { styles[id] = fields }
        }
        return PreviousCatalog(object: object, bytes: bytes, serial: serial, regions: regions, styles: styles)
    }
}
