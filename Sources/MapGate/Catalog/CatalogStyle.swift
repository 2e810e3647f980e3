import Foundation

/// A publisher's style on offer (the catalog's `styles`): a ``StyleBundle`` package, downloaded
/// and verified like a region's, drawn from the regions it names.
public struct CatalogStyle: Sendable, Equatable {
    public var id: String
    public var name: String
    /// The style's version: the first 12 hex digits of its content's SHA-256, set by `publish`.
    public var version: String
    /// Absolute URL of the package (resolved against the catalog's URL).
    public var url: String
    /// Size and SHA-256 of the file as downloaded (gzip or not).
    public var size: Int64
    public var sha256: String
    /// Size of the bundle once decompressed.
    public var installedSize: Int64
    /// The regions the style draws: it is installed when they all are.
    public var regions: [String]

    /// The package as the downloader takes it: under a name no region can have (a region id
    /// starts with a letter or a digit), so its partial files never meet a region's.
    public var package: CatalogRegion {
        CatalogRegion(
            id: "_style-" + id, name: name, version: version, url: url, size: size, sha256: sha256, installedSize: installedSize,
            format: .pbf, bounds: nil, minzoom: 0, maxzoom: 0)
    }
}

extension Catalog {
    /// The installed styles' entries: each checked as strictly as a region's; a bad one is
    /// rejected with its reason and leaves the others alone.
    static func parseStyles(_ raw: Any?, sourceURL: String) -> (styles: [CatalogStyle], rejected: [CatalogError]) {
        func fail(_ reason: String) -> CatalogError { CatalogError(source: sourceURL, region: nil, reason: reason) }
        guard let raw else { return ([], []) }
        guard let entries = raw as? [Any] else { return ([], [fail("styles must be an array")]) }
        var styles: [CatalogStyle] = []
        var rejected: [CatalogError] = []
        var seen = Set<String>()
        for (index, entry) in entries.enumerated() {
            do {
                guard let fields = entry as? [String: Any] else { throw fail("styles[\(index)] is not an object") }
                let style = try parseStyle(fields, index: index, sourceURL: sourceURL)
                guard seen.insert(style.id).inserted else {
                    styles.removeAll { $0.id == style.id }
                    throw fail("style \(style.id): duplicate id")
                }
                styles.append(style)
            } catch let error as CatalogError {
                rejected.append(error)
            } catch {
                rejected.append(fail("styles[\(index)]: \(error)"))
            }
        }
        return (styles, rejected)
    }

    private static func parseStyle(_ fields: [String: Any], index: Int, sourceURL: String) throws -> CatalogStyle {
        guard let id = fields["id"] as? String, isValidStyleID(id) else {
            throw CatalogError(source: sourceURL, region: nil, reason: "styles[\(index)]: id is missing or not of the form [a-z0-9][a-z0-9._-]{0,63}")
        }
        func fail(_ reason: String) -> CatalogError { CatalogError(source: sourceURL, region: nil, reason: "style \(id): \(reason)") }
        func string(_ key: String) throws -> String {
            guard let value = fields[key] as? String, !value.isEmpty else { throw fail("\(key) is missing or not a string") }
            return value
        }
        func size(_ key: String) throws -> Int64 {
            guard let raw = fields[key], let number = raw as? NSNumber, !isBoolean(raw), let value = Int64(exactly: number.doubleValue) else {
                throw fail("\(key) is missing or not an integer")
            }
            guard value > 0, value <= StyleBundle.maximumSize else { throw fail("\(key) \(value) is out of range (1…\(StyleBundle.maximumSize))") }
            return value
        }
        let version = try string("version")
        guard isFileSafeVersion(version) else { throw fail("version \"\(version)\" is not of the form [A-Za-z0-9][A-Za-z0-9._+-]{0,63}") }
        let hash = try string("sha256").lowercased()
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw fail("sha256 \"\(hash)\" is not 64 hex digits")
        }
        guard let regions = fields["regions"] as? [String], !regions.isEmpty, regions.allSatisfy(isValidRegionID) else {
            throw fail("regions must be a non-empty list of region ids")
        }
        let url = try resolve(try string("url"), against: sourceURL, fail: fail)
        return CatalogStyle(
            id: id, name: (fields["name"] as? String) ?? id, version: version, url: url, size: try size("size"), sha256: hash,
            installedSize: try size("installedSize"), regions: regions.sorted())
    }

    /// A style id: the pattern of a region id (`[a-z0-9][a-z0-9._-]{0,63}`); route names are
    /// no problem, styles live under `/styles/`.
    public static func isValidStyleID(_ id: String) -> Bool { matchesIDPattern(id) }

    /// A version that can be part of a file name (`<id>-<version>.mbtiles.gz`): `[A-Za-z0-9][A-Za-z0-9._+-]{0,63}`.
    public static func isFileSafeVersion(_ text: String) -> Bool {
        guard (1...64).contains(text.utf8.count), text != ".", text != ".." else { return false }
        for (offset, byte) in text.utf8.enumerated() {
            let alphanumeric = (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
            if offset == 0 ? !alphanumeric : !(alphanumeric || [0x2E, 0x5F, 0x2D, 0x2B].contains(byte)) { return false }
        }
        return true
    }
}
