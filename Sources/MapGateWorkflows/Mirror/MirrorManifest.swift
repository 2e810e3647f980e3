import FoundationEssentials
import MapGateBase
import MapGateTrust

/// `mirror.json`: what a mirror holds and what it left out, for people and for `sync --from`.
/// It is not signed and is never trusted for anything that matters: `sync --from` reads it only
/// to know which packages to look for, names each package by the SHA-256 of the *signed*
/// catalog, and checks every byte against it. A lying manifest can only make a region be skipped
/// or fail its check.
public struct MirrorManifest: Codable, Sendable, Equatable {
    public struct Package: Codable, Sendable, Equatable {
        public var id: String
        public var version: String
        public var sha256: String
        public var size: Int64
    }

    /// A delta the mirror carries: for machines that have `fromVersion` of the region.
    public struct Delta: Codable, Sendable, Equatable {
        public var id: String
        public var fromVersion: String
        public var sha256: String
        public var size: Int64
    }

    public struct LeftOut: Codable, Sendable, Equatable {
        public var id: String
        public var reason: String
    }

    public var formatVersion = 1
    /// When the mirror was written (ISO 8601, UTC).
    public var written: String
    /// The catalog's serial and the SHA-256 of its bytes.
    public var catalogSerial: Int64?
    public var catalogSHA256: String
    public var regions: [Package]
    public var styles: [Package]
    public var deltas: [Delta]
    /// Regions and styles of the catalog that are not in the mirror, each with the reason.
    public var leftOut: [LeftOut]

    /// What a mirror is taken to hold when its manifest was written for another catalog than the
    /// one beside it (a mirror cut short between the two files): every package, style and delta
    /// the catalog names, each looked for by its hash (found by an attack: a cut left the old
    /// catalog, its packages and the new manifest, and every region was "not in the mirror").
    ///
    /// - Parameter holds: whether the mirror has a file for a package of this hash, when that can
    ///   be seen at once (a folder): a package without one is not in the mirror, as a manifest
    ///   would have said (found by an attack: a stick without its manifest and without one region's
    ///   package failed with "cannot be read", 74, where "not in the mirror" was the truth).
    public static func everything(in catalog: Catalog, catalogSHA256: String, written: String, holds: (String) -> Bool = { _ in true }) -> MirrorManifest {
        MirrorManifest(
            written: written, catalogSerial: catalog.serial, catalogSHA256: catalogSHA256,
            regions: catalog.regions.filter { holds($0.sha256) }.map { Package(id: $0.id, version: $0.version, sha256: $0.sha256, size: $0.size) },
            styles: catalog.styles.filter { holds($0.sha256) }.map { Package(id: $0.id, version: $0.version, sha256: $0.sha256, size: $0.size) },
            deltas: catalog.regions.flatMap { region in
                region.deltas.filter { holds($0.sha256) }.map { Delta(id: region.id, fromVersion: $0.fromVersion, sha256: $0.sha256, size: $0.size) }
            },
            leftOut: [])
    }

    /// This manifest with the packages, styles and deltas of `other` it does not list (what a
    /// folder is seen to hold beside what its manifest says); its reasons for what was left out
    /// are kept for the rest.
    public func including(_ other: MirrorManifest) -> MirrorManifest {
        var merged = self
        let regionKeys = Set(regions.map { "\($0.id) \($0.sha256)" })
        let styleKeys = Set(styles.map { "\($0.id) \($0.sha256)" })
        let deltaKeys = Set(deltas.map { "\($0.id) \($0.sha256)" })
        merged.regions += other.regions.filter { !regionKeys.contains("\($0.id) \($0.sha256)") }
        merged.styles += other.styles.filter { !styleKeys.contains("\($0.id) \($0.sha256)") }
        merged.deltas += other.deltas.filter { !deltaKeys.contains("\($0.id) \($0.sha256)") }
        return merged
    }

    /// The largest manifest read (a catalog's regions and styles fit many times over).
    public static let maximumBytes = 8 << 20

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// The first package or delta whose hash or size no mirror writer gives (found by an attack:
    /// a hash of the wrong form was quietly matched against nothing, and the region said "not in
    /// the mirror"), as `regions[2].sha256 "xyz" is not …`; nil when every one is of its form.
    var malformedField: String? {
        let entries =
            regions.enumerated().map { ("regions[\($0.offset)]", $0.element.sha256, $0.element.size) }
            + styles.enumerated().map { ("styles[\($0.offset)]", $0.element.sha256, $0.element.size) }
            + deltas.enumerated().map { ("deltas[\($0.offset)]", $0.element.sha256, $0.element.size) }
        for (name, sha256, size) in entries {
            guard sha256.isSHA256Hex else {
                return L.localized("%1$s.sha256 \"%2$s\" is not a SHA-256 (64 hexadecimal digits)", name, String(sha256.prefix(80)))
            }
            guard size >= 0 else { return L.localized("%1$s.size %2$s is not a size in bytes", name, "\(size)") }
        }
        return nil
    }

    public static func decode(_ data: Data, source: String) throws -> MirrorManifest {
        do {
            let manifest = try JSONDecoder().decode(MirrorManifest.self, from: data)
            guard manifest.formatVersion == 1 else {
                throw GeneralFailure(L.localized("%1$s: formatVersion %2$s is not 1 (a newer mapgate wrote this mirror)", "\(source)", "\(manifest.formatVersion)"), kind: .badData)
            }
            if let problem = manifest.malformedField {
                throw Damaged(message: L.localized("%1$s: not a mirror manifest (%2$s)", "\(source)", "\(problem)"))
            }
            return manifest
        } catch let error as GeneralFailure {
            throw error
        } catch let error as Damaged {
            throw error
        } catch {
            // Said in mapgate's words (Foundation's are English, and say only "not in the correct
            // format"): where the text stops being JSON, or which field is wrong.
            var detail: String
            do {
                _ = try JSONValue(parsing: data)
                detail = (error as? DecodingError).map { CatalogFile.reason($0) } ?? errorMessage(error)
            } catch {
                detail = L.localized("not valid JSON%1$s (%2$s bytes; truncated?)", ": \(error.description)", "\(data.count)")
            }
            throw Damaged(message: L.localized("%1$s: not a mirror manifest (%2$s)", "\(source)", "\(detail)"))
        }
    }

    /// A manifest that is not one (cut short on a stick pulled out, edited): its message says
    /// where its text stops being JSON or which field is wrong. Unlike a newer `formatVersion`,
    /// a reader can do without it, as without a missing one.
    public struct Damaged: MapGateFailure, LocalizedError, Sendable {
        public let message: String
        public var kind: FailureKind { .badData }
        public var errorDescription: String? { message }
    }
}
