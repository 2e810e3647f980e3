import FoundationEssentials

/// The publisher's catalog of map regions (`formatVersion` 1), documented in docs/catalog.md.
public struct Catalog: Sendable, Equatable {
    public var publisher: String
    public var generated: Date?
    public var minimumAppVersion: String?
    public var regions: [CatalogRegion]
    /// The URL the catalog came from; region URLs are resolved against it.
    public var sourceURL: String
    /// Raised by the publisher with every change; a lower one than already accepted is a rollback.
    public var serial: Int64?
    /// After this moment the catalog is stale and refused (freeze protection).
    public var expires: Date?
    /// The publisher's gate rules (honoured only from a signed catalog).
    public var gate: PublisherGate?
    /// Region entries that could not be used, each with the reason: reported, never installed,
    /// and no reason to refuse the good ones.
    public var rejected: [CatalogError] = []
    /// The publisher's styles (``CatalogStyle``), and the entries that could not be used.
    public var styles: [CatalogStyle] = []
    public var rejectedStyles: [CatalogError] = []

    public func region(_ id: String) -> CatalogRegion? { regions.first { $0.id == id } }

    /// Why the entry for `id` was rejected, if it was.
    public func rejection(of id: String) -> CatalogError? { rejected.first { $0.region == id } }
}

/// The publisher's rules for the gate, inside the signed catalog: they replace the profile's and
/// the managed policy's, and are saved with the gate's state so they hold offline.
public struct PublisherGate: Sendable, Equatable, Codable {
    /// An installed app below this version is closed at once: no grace, no uses.
    public var minimumAppVersion: String?
    public var graceDays: Int?
    public var maxPrompts: Int?
    public var closeAfterDays: Int?

    public init(minimumAppVersion: String? = nil, graceDays: Int? = nil, maxPrompts: Int? = nil, closeAfterDays: Int? = nil) {
        self.minimumAppVersion = minimumAppVersion
        self.graceDays = graceDays
        self.maxPrompts = maxPrompts
        self.closeAfterDays = closeAfterDays
    }
}

/// One region on offer.
public struct CatalogRegion: Sendable, Equatable {
    public var id: String
    public var name: String
    public var version: String
    /// Absolute URL of the package (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String
    /// Size of the MBTiles file once decompressed.
    public var installedSize: Int64
    public var format: TileFormat
    public var bounds: [Double]?
    public var minzoom: Int
    public var maxzoom: Int
    public var minimumAppVersion: String?
    /// martin's `agg_tiles_hash` of the region's tiles (32 upper-case hex digits), when given.
    public var contentHash: String? = nil
    /// Tile-level deltas from earlier versions to this one (see ``MBTilesDelta``).
    public var deltas: [CatalogDelta] = []
}

/// A delta package on offer: applied to the tiles of `fromVersion` (whose `agg_tiles_hash` is
/// `fromHash`), it gives the region's current version.
public struct CatalogDelta: Sendable, Equatable {
    public var fromVersion: String
    /// 32 upper-case hex digits.
    public var fromHash: String
    /// Absolute URL of the delta (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String

    public init(fromVersion: String, fromHash: String, url: String, size: Int64, sha256: String) {
        self.fromVersion = fromVersion
        self.fromHash = fromHash
        self.url = url
        self.size = size
        self.sha256 = sha256
    }
}

/// A catalog that cannot be used. Raised before anything is downloaded.
public struct CatalogError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let source: String
    /// The region concerned, when there is one.
    public let region: String?
    public let reason: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? {
        if let region { return "catalog \(source): region \(region): \(reason)" }
        return "catalog \(source): \(reason)"
    }
}

extension Catalog {
    /// The largest package or installed size accepted (1 TiB): anything above is absurd.
    public static let maximumSize: Int64 = 1 << 40

    /// Why `id` cannot be a region id, or nil when it can: one of the server's route names, or
    /// not of the pattern.
    public static func regionIDProblem(_ id: String) -> String? {
        if reservedRegionIDs.contains(id) {
            return "\"\(id)\" is reserved for the tile server's routes (\(reservedRegionIDs.sorted().joined(separator: ", ")))"
        }
        return isValidRegionID(id) ? nil : "\"\(id)\" is not of the form [a-z0-9][a-z0-9._-]{0,63}"
    }

    /// Whether `id` is a valid region id: `[a-z0-9][a-z0-9._-]{0,63}`, never `.` or `..`, and
    /// none of ``reservedRegionIDs``.
    public static func isValidRegionID(_ id: String) -> Bool {
        !reservedRegionIDs.contains(id) && matchesIDPattern(id)
    }

    /// `[a-z0-9][a-z0-9._-]{0,63}`, never `.` or `..`: safe as a file name and a URL path segment.
    static func matchesIDPattern(_ id: String) -> Bool {
        guard (1...64).contains(id.utf8.count), id != ".", id != ".." else { return false }
        for (offset, byte) in id.utf8.enumerated() {
            let alphanumeric = (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            if offset == 0 ? !alphanumeric : !(alphanumeric || byte == 0x2E || byte == 0x5F || byte == 0x2D) {
                return false
            }
        }
        return true
    }

    /// Parses and validates a catalog document fetched from `sourceURL`.
    public static func parse(_ data: Data, sourceURL: String) throws -> Catalog {
        func fail(_ reason: String, region: String? = nil) -> CatalogError {
            CatalogError(source: sourceURL, region: region, reason: reason)
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: data)
        } catch {
            // The parser says where the text stopped making sense ("… around character 7.").
            throw fail("not valid JSON: \(error.description) (\(data.count) bytes; truncated?)")
        }
        guard let object = parsed.objectValue else {
            throw fail("not a JSON object")
        }
        guard let formatVersion = object["formatVersion"]?.int else { throw fail("formatVersion is missing") }
        guard formatVersion == 1 else { throw fail("formatVersion \(formatVersion) is not supported (mapgate reads 1)") }
        guard let publisher = object["publisher"]?.stringValue else { throw fail("publisher is missing") }
        let generated = object["generated"]?.stringValue.flatMap(ISODate.parse)
        let minimum = object["minimumAppVersion"]?.stringValue
        if let minimum, (try? AppVersion(minimum)) == nil { throw fail("minimumAppVersion \"\(minimum)\" is not a version") }
        var serial: Int64?
        if let raw = object["serial"] {
            guard raw.isNumber, !raw.isBoolean, let value = raw.double.flatMap({ Int64(exactly: $0) }), value >= 0 else {
                throw fail("serial must be a non-negative integer")
            }
            serial = value
        }
        var expires: Date?
        if let raw = object["expires"] {
            guard let text = raw.stringValue, let date = ISODate.parse(text) else { throw fail("expires must be an ISO 8601 date") }
            expires = date
        }
        let gate = try object["gate"].map { try parseGate($0, fail: { fail($0) }) }
        guard let entries = object["regions"]?.arrayValue else { throw fail("regions is missing") }
        var seen = Set<String>()
        var regions: [CatalogRegion] = []
        var rejected: [CatalogError] = []
        for (index, entry) in entries.enumerated() {
            do {
                guard let fields = entry.objectValue else { throw fail("regions[\(index)] is not an object") }
                let region = try parseRegion(fields, index: index, sourceURL: sourceURL)
                guard seen.insert(region.id).inserted else {
                    // Neither copy of a duplicated id can be trusted to be the one meant.
                    regions.removeAll { $0.id == region.id }
                    throw fail("duplicate id", region: region.id)
                }
                regions.append(region)
            } catch let error as CatalogError {
                rejected.append(error)
            }
        }
        let styles = parseStyles(object["styles"], sourceURL: sourceURL)
        return Catalog(
            publisher: publisher, generated: generated, minimumAppVersion: minimum, regions: regions, sourceURL: sourceURL,
            serial: serial, expires: expires, gate: gate, rejected: rejected, styles: styles.styles, rejectedStyles: styles.rejected)
    }

    private static func parseGate(_ raw: JSONValue, fail: (String) -> CatalogError) throws -> PublisherGate {
        guard let fields = raw.objectValue else { throw fail("gate must be an object") }
        let known: Set<String> = ["minimumAppVersion", "graceDays", "maxPrompts", "closeAfterDays"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) { throw fail("gate: unknown key \"\(unknown)\"") }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let raw = fields[key] else { return nil }
            guard raw.isNumber, !raw.isBoolean, let value = raw.double.flatMap({ Int(exactly: $0) }), range.contains(value) else {
                throw fail("gate: \(key) must be an integer \(range.lowerBound)…\(range.upperBound)")
            }
            return value
        }
        var gate = PublisherGate(
            graceDays: try integer("graceDays", 0...365), maxPrompts: try integer("maxPrompts", 0...100),
            closeAfterDays: try integer("closeAfterDays", 0...3650))
        if let raw = fields["minimumAppVersion"] {
            guard let text = raw.stringValue, (try? AppVersion(text)) != nil else { throw fail("gate: minimumAppVersion is not a version") }
            gate.minimumAppVersion = text
        }
        return gate
    }

    private static func parseRegion(_ raw: [String: JSONValue], index: Int, sourceURL: String) throws -> CatalogRegion {
        guard let id = raw["id"]?.stringValue else {
            throw CatalogError(source: sourceURL, region: nil, reason: "regions[\(index)] has no id")
        }
        func fail(_ reason: String) -> CatalogError { CatalogError(source: sourceURL, region: id, reason: reason) }
        if let problem = regionIDProblem(id) {
            throw CatalogError(source: sourceURL, region: nil, reason: "regions[\(index)]: invalid id: \(problem)")
        }
        let fields = CatalogFields(fields: raw, fail: fail)
        func zoom(_ key: String) throws -> Int {
            guard let number = fields[key]?.int, (0...30).contains(number) else { throw fail("\(key) must be an integer 0…30") }
            return number
        }
        let version = try fields.string("version")
        let hash = try fields.sha256()
        let formatText = try fields.string("format")
        guard let format = TileFormat(rawValue: formatText) else { throw fail("format \"\(formatText)\" is not png, jpg, webp or pbf") }
        let url = try fields.url(against: sourceURL)
        let minzoom = try zoom("minzoom")
        let maxzoom = try zoom("maxzoom")
        guard minzoom <= maxzoom else { throw fail("minzoom \(minzoom) is above maxzoom \(maxzoom)") }
        var bounds: [Double]?
        if let raw = fields["bounds"] {
            guard let values = raw.arrayValue?.compactMap(\.double), values.count == 4, raw.arrayValue?.count == 4 else {
                throw fail("bounds must be [west, south, east, north]")
            }
            let b = values
            guard (-180...180).contains(b[0]), (-180...180).contains(b[2]), (-90...90).contains(b[1]), (-90...90).contains(b[3]), b[1] <= b[3] else {
                throw fail("bounds \(b) are outside the world")
            }
            bounds = b
        }
        let minimum = fields["minimumAppVersion"]?.stringValue
        if let minimum, (try? AppVersion(minimum)) == nil { throw fail("minimumAppVersion \"\(minimum)\" is not a version") }
        var contentHash: String?
        if let raw = fields["contentHash"] {
            guard let text = raw.stringValue, isTilesetHash(text) else { throw fail("contentHash must be 32 hex digits") }
            contentHash = text.uppercased()
        }
        var deltas: [CatalogDelta] = []
        if let raw = fields["deltas"] {
            guard let entries = raw.arrayValue else { throw fail("deltas must be an array") }
            for (offset, entry) in entries.enumerated() {
                guard let delta = entry.objectValue else { throw fail("deltas[\(offset)] is not an object") }
                deltas.append(try parseDelta(CatalogFields(fields: delta, fail: { fail("deltas[\(offset)]: \($0)") }), sourceURL: sourceURL))
            }
        }
        return CatalogRegion(
            id: id, name: fields["name"]?.stringValue ?? id, version: version, url: url, size: try fields.size("size"), sha256: hash,
            installedSize: try fields.size("installedSize"), format: format, bounds: bounds, minzoom: minzoom, maxzoom: maxzoom,
            minimumAppVersion: minimum, contentHash: contentHash, deltas: deltas)
    }

    /// Whether `text` is a martin `agg_tiles_hash`: 32 hex digits.
    static func isTilesetHash(_ text: String) -> Bool {
        text.utf8.count == 32 && text.allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    /// One entry of a region's `deltas`, checked as strictly as the region's own package.
    private static func parseDelta(_ fields: CatalogFields, sourceURL: String) throws -> CatalogDelta {
        let fromVersion = try fields.string("fromVersion")
        let fromHash = try fields.string("fromHash")
        guard isTilesetHash(fromHash) else { throw fields.fail("fromHash \"\(fromHash)\" is not 32 hex digits") }
        let hash = try fields.sha256()
        let size = try fields.size("size")
        let url = try fields.url(against: sourceURL)
        return CatalogDelta(fromVersion: fromVersion, fromHash: fromHash.uppercased(), url: url, size: size, sha256: hash)
    }

    /// Resolves a package URL (absolute, or relative to the catalog) and checks its scheme.
    static func resolve(_ text: String, against base: String, fail: (String) -> CatalogError) throws -> String {
        guard let resolved = URL(string: text, relativeTo: URL(string: base))?.absoluteURL,
            let scheme = resolved.scheme?.lowercased()
        else { throw fail("url \"\(text)\" is not a URL") }
        guard ["http", "https", "file"].contains(scheme) else { throw fail("url scheme \"\(scheme)\" is not http, https or file") }
        return resolved.absoluteString
    }
}
