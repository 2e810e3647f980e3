import FoundationEssentials
import MapGateBase
import MapGateStorage

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
    /// Regions the catalog offers that the place it was read from does not carry (a mirror that
    /// has only some of them), each with the reason: installed ones stay as they are.
    public var absent: [String: String] = [:]
    /// The names of the ``absent`` regions, by id: a region the user names by its name is said to
    /// be not in the mirror, as by its id (found by an attack: by name it was "not in the catalog").
    public var absentNames: [String: String] = [:]

    public func region(_ id: String) -> CatalogRegion? { regions.first { $0.id == id } }

    /// Why the entry for `id` was rejected, if it was.
    public func rejection(of id: String) -> CatalogError? { rejected.first { $0.region == id } }
}

extension Catalog {
    /// The largest package or installed size accepted (1 TiB): anything above is absurd.
    public static let maximumSize: Int64 = 1 << 40

    /// Why `id` cannot be a region id, or nil when it can: one of the server's route names, or
    /// not of the pattern.
    public static func regionIDProblem(_ id: String) -> String? {
        if reservedRegionIDs.contains(id) {
            return L.localized("\"%1$s\" is reserved for the tile server's routes (%2$s)", "\(id)", "\(reservedRegionIDs.sorted().joined(separator: ", "))")
        }
        return isValidRegionID(id) ? nil : L.localized("\"%1$s\" is not of the form [a-z0-9][a-z0-9._-]{0,63}", "\(id)")
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

    /// Parses and validates a catalog document fetched from `sourceURL`: decoded as a
    /// ``CatalogFile``, then each entry checked for what JSON types cannot say.
    public static func parse(_ data: Data, sourceURL: String) throws -> Catalog {
        func fail(_ reason: String, region: String? = nil) -> CatalogError {
            CatalogError(source: sourceURL, region: region, reason: reason)
        }
        if let key = JSONValue.duplicateKey(in: data) {
            throw fail(L.localized("the key \"%1$s\" appears twice in one object: JSON readers differ on which value counts, so the catalog means two things", TerminalText.inline(String(key.prefix(80)))))
        }
        let file: CatalogFile
        do {
            file = try JSONDecoder().decode(CatalogFile.self, from: data)
        } catch let error as DecodingError {
            // Said in the order that matters: not JSON, not an object, another format (refused for
            // that, not for its fields), then the field. The header is read only on this path.
            struct Header: Decodable { var formatVersion: Int? }
            let header: Header
            do {
                header = try JSONDecoder().decode(Header.self, from: data)
            } catch let headerError as DecodingError {
                if case .typeMismatch(_, let context) = headerError {
                    throw fail(context.codingPath.isEmpty ? "not a JSON object" : "formatVersion is not an integer")
                }
                // Not JSON at all: the parser says where the text stopped making sense ("… around character 7.").
                var detail = ""
                do { _ = try JSONValue(parsing: data) } catch { detail = ": \(error.description)" }
                throw fail(L.localized("not valid JSON%1$s (%2$s bytes; truncated?)", "\(detail)", "\(data.count)"))
            }
            guard let formatVersion = header.formatVersion else { throw fail(L.localized("formatVersion is missing")) }
            guard formatVersion == 1 else { throw fail(L.localized("formatVersion %1$s is not supported (mapgate reads 1)", "\(formatVersion)")) }
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, let found = CatalogFile.nonIntegerNumber(in: data) {
                throw fail(found.reason, region: found.region)
            }
            throw fail(CatalogFile.reason(error))
        }
        guard file.formatVersion == 1 else { throw fail(L.localized("formatVersion %1$s is not supported (mapgate reads 1)", "\(file.formatVersion)")) }
        let generated = file.generated.flatMap(ISODate.parse)
        if let minimum = file.minimumAppVersion, (try? AppVersion(minimum)) == nil {
            throw fail(L.localized("minimumAppVersion \"%1$s\" is not a version", "\(minimum)"))
        }
        if let serial = file.serial, serial < 0 { throw fail(L.localized("serial must be a non-negative integer")) }
        var expires: Date?
        if let text = file.expires {
            guard let date = ISODate.parse(text) else { throw fail(L.localized("expires must be an ISO 8601 date")) }
            expires = date
        }
        var seen = Set<String>()
        var regions: [CatalogRegion] = []
        var rejected: [CatalogError] = []
        for (index, entry) in file.regions.enumerated() {
            do {
                let region = try checkRegion(entry, index: index, sourceURL: sourceURL)
                guard seen.insert(region.id).inserted else {
                    // Neither copy of a duplicated id can be trusted to be the one meant.
                    regions.removeAll { $0.id == region.id }
                    throw fail(L.localized("duplicate id"), region: region.id)
                }
                regions.append(region)
            } catch let error as CatalogError {
                rejected.append(error)
            }
        }
        var styles = checkStyles(file.styles ?? [], sourceURL: sourceURL)
        if let problem = file.stylesProblem { styles.rejected.append(fail(problem)) }
        return Catalog(
            publisher: file.publisher, generated: generated, minimumAppVersion: file.minimumAppVersion, regions: regions,
            sourceURL: sourceURL, serial: file.serial, expires: expires, gate: file.gate, rejected: rejected, styles: styles.styles,
            rejectedStyles: styles.rejected)
    }

    /// The region an entry describes, or the entry's ``CatalogError``.
    private static func checkRegion(_ entry: CatalogFile.Entry<CatalogFile.Region>, index: Int, sourceURL: String) throws -> CatalogRegion {
        let fields: CatalogFile.Region
        switch entry {
        case .invalid(let id?, let reason) where regionIDProblem(id) == nil:
            throw CatalogError(source: sourceURL, region: id, reason: reason)
        case .invalid(_, let reason):
            let said = reason == "id is missing" || reason == "id is not a string" ? "regions[\(index)] has no id" : "regions[\(index)]: \(reason)"
            throw CatalogError(source: sourceURL, region: nil, reason: said)
        case .valid(let valid):
            fields = valid
        }
        let id = fields.id
        func fail(_ reason: String) -> CatalogError { CatalogError(source: sourceURL, region: id, reason: reason) }
        if let problem = regionIDProblem(id) {
            throw CatalogError(source: sourceURL, region: nil, reason: L.localized("regions[%1$s]: invalid id: %2$s", "\(index)", "\(problem)"))
        }
        let check = CatalogFieldCheck(fail: fail)
        let version = try check.nonEmpty(fields.version, "version")
        let hash = try check.sha256(fields.sha256)
        guard let format = TileFormat(rawValue: fields.format) else { throw fail(L.localized("format \"%1$s\" is not png, jpg, webp or pbf", "\(fields.format)")) }
        let url = try check.url(fields.url, against: sourceURL)
        for (key, zoom) in [("minzoom", fields.minzoom), ("maxzoom", fields.maxzoom)] where !TileCoordinate.zooms.contains(zoom) {
            throw fail(L.localized("%1$s must be an integer 0…30", "\(key)"))
        }
        guard fields.minzoom <= fields.maxzoom else { throw fail(L.localized("minzoom %1$s is above maxzoom %2$s", "\(fields.minzoom)", "\(fields.maxzoom)")) }
        if let b = fields.bounds {
            guard b.count == 4 else { throw fail(L.localized("bounds must be [west, south, east, north]")) }
            guard (-180...180).contains(b[0]), (-180...180).contains(b[2]), (-90...90).contains(b[1]), (-90...90).contains(b[3]), b[1] <= b[3] else {
                throw fail(L.localized("bounds %1$s are outside the world", "\(b)"))
            }
        }
        if let minimum = fields.minimumAppVersion, (try? AppVersion(minimum)) == nil {
            throw fail(L.localized("minimumAppVersion \"%1$s\" is not a version", "\(minimum)"))
        }
        if let hash = fields.contentHash, !isTilesetHash(hash) { throw fail(L.localized("contentHash must be 32 hex digits")) }
        var deltas: [CatalogDelta] = []
        for (offset, entry) in (fields.deltas ?? []).enumerated() {
            let check = CatalogFieldCheck { fail("deltas[\(offset)]: \($0)") }
            switch entry {
            case .invalid(_, let reason): throw check.fail(reason)
            case .valid(let delta): deltas.append(try checkDelta(delta, check: check, sourceURL: sourceURL))
            }
        }
        return CatalogRegion(
            id: id, name: fields.name ?? id, version: version, url: url, size: try check.size(fields.size, "size"), sha256: hash,
            installedSize: try check.size(fields.installedSize, "installedSize"), format: format, bounds: fields.bounds,
            minzoom: fields.minzoom, maxzoom: fields.maxzoom, minimumAppVersion: fields.minimumAppVersion,
            contentHash: fields.contentHash?.uppercased(), deltas: deltas)
    }

    /// Whether `text` is a martin `agg_tiles_hash`: 32 hex digits.
    static func isTilesetHash(_ text: String) -> Bool {
        text.utf8.count == 32 && text.allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    /// One entry of a region's `deltas`, checked as strictly as the region's own package.
    private static func checkDelta(_ delta: CatalogFile.Delta, check: CatalogFieldCheck, sourceURL: String) throws -> CatalogDelta {
        let fromVersion = try check.nonEmpty(delta.fromVersion, "fromVersion")
        guard isTilesetHash(delta.fromHash) else { throw check.fail(L.localized("fromHash \"%1$s\" is not 32 hex digits", "\(delta.fromHash)")) }
        let hash = try check.sha256(delta.sha256)
        let size = try check.size(delta.size, "size")
        let url = try check.url(delta.url, against: sourceURL)
        return CatalogDelta(fromVersion: fromVersion, fromHash: delta.fromHash.uppercased(), url: url, size: size, sha256: hash)
    }

    /// Resolves a package URL (absolute, or relative to the catalog) and checks its scheme.
    static func resolve(_ text: String, against base: String, fail: (String) -> CatalogError) throws -> String {
        guard let resolved = URL(string: text, relativeTo: URL(string: base))?.absoluteURL,
            let scheme = resolved.scheme?.lowercased()
        else { throw fail(L.localized("url \"%1$s\" is not a URL", "\(text)")) }
        guard ["http", "https", "file"].contains(scheme) else { throw fail(L.localized("url scheme \"%1$s\" is not http, https or file", "\(scheme)")) }
        return resolved.absoluteString
    }
}
