import FoundationEssentials
import MapGateBase
import MapGateStorage

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
    public var package: PackageReference {
        PackageReference(id: "_style-" + id, url: url, size: size, sha256: sha256, installedSize: installedSize)
    }
}

extension Catalog {
    /// The catalog's `styles`: each entry checked as strictly as a region's; a bad one is
    /// rejected with its reason and leaves the others alone.
    static func checkStyles(_ entries: [CatalogFile.Entry<CatalogFile.Style>], sourceURL: String) -> (styles: [CatalogStyle], rejected: [CatalogError]) {
        func fail(_ reason: String) -> CatalogError { CatalogError(source: sourceURL, region: nil, reason: reason) }
        var styles: [CatalogStyle] = []
        var rejected: [CatalogError] = []
        var seen = Set<String>()
        for (index, entry) in entries.enumerated() {
            do {
                let style = try checkStyle(entry, index: index, sourceURL: sourceURL)
                guard seen.insert(style.id).inserted else {
                    styles.removeAll { $0.id == style.id }
                    throw fail(L.localized("style %1$s: duplicate id", "\(style.id)"))
                }
                styles.append(style)
            } catch let error as CatalogError {
                rejected.append(error)
            } catch {
                rejected.append(fail("styles[\(index)]: \(errorMessage(error))"))
            }
        }
        return (styles, rejected)
    }

    private static func checkStyle(_ entry: CatalogFile.Entry<CatalogFile.Style>, index: Int, sourceURL: String) throws -> CatalogStyle {
        let fields: CatalogFile.Style
        switch entry {
        case .invalid(let id?, let reason) where isValidStyleID(id):
            throw CatalogError(source: sourceURL, region: nil, reason: L.localized("style %1$s: %2$s", "\(id)", "\(reason)"))
        case .invalid(_, let reason):
            throw CatalogError(source: sourceURL, region: nil, reason: "styles[\(index)]: \(reason)")
        case .valid(let valid):
            fields = valid
        }
        guard isValidStyleID(fields.id) else {
            throw CatalogError(source: sourceURL, region: nil, reason: L.localized("styles[%1$s]: id is not of the form [a-z0-9][a-z0-9._-]{0,63}", "\(index)"))
        }
        let check = CatalogFieldCheck { CatalogError(source: sourceURL, region: nil, reason: L.localized("style %1$s: %2$s", "\(fields.id)", "\($0)")) }
        guard isFileSafeVersion(fields.version) else {
            throw check.fail(L.localized("version \"%1$s\" is not of the form [A-Za-z0-9][A-Za-z0-9._+-]{0,63}", "\(fields.version)"))
        }
        let hash = try check.sha256(fields.sha256)
        guard !fields.regions.isEmpty, fields.regions.allSatisfy(isValidRegionID) else {
            throw check.fail(L.localized("regions must be a non-empty list of region ids"))
        }
        let url = try check.url(fields.url, against: sourceURL)
        return CatalogStyle(
            id: fields.id, name: fields.name ?? fields.id, version: fields.version, url: url,
            size: try check.size(fields.size, "size", limit: StyleBundle.maximumSize), sha256: hash,
            installedSize: try check.size(fields.installedSize, "installedSize", limit: StyleBundle.maximumSize), regions: fields.regions.sorted())
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
