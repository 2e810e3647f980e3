import FoundationEssentials
import MapGateBase

/// What `publish` remembers between runs, in `OUT_DIR/.publish/history.json`: for each region,
/// the versions it keeps (newest first) with their packages, deltas and base copies.
struct PublishHistory: Codable, Equatable {
    var formatVersion = 1
    var regions: [String: [PublishedVersion]] = [:]
    /// For each region, the versions trimmed from `regions` (by `--keep`), by version: the
    /// SHA-256 of the file each was made from. Never trimmed: a version number, once published,
    /// names those tiles for good (found by an attack: a version trimmed away could be published
    /// again with other tiles, and a client that had the first kept it as "up to date").
    /// Absent in histories written before.
    var retired: [String: [String: String]]?

    static func load(path: String) throws -> PublishHistory {
        guard FileManager.default.fileExists(atPath: path) else { return PublishHistory() }
        do {
            let history = try JSONDecoder().decode(PublishHistory.self, from: readRegularFile(path))
            guard history.formatVersion == 1 else {
                throw PublishError(path, L.localized("formatVersion %1$s is not supported (mapgate reads 1)", "\(history.formatVersion)"))
            }
            // The files it names are removed when their version is trimmed: each must be a file
            // of the folder publish writes it in (found by an attack: a history naming
            // `../../victim` had that folder removed, recursively, outside the output folder).
            for (id, versions) in history.regions {
                for version in versions {
                    for name in [version.package] + version.deltas.map(\.package) + [version.base].compactMap({ $0 }) where !isPlainFileName(name) {
                        throw PublishError(
                            path,
                            L.localized(
                                "region %1$s, version %2$s names the file \"%3$s\", which is not a file name of its folder (move the history away to start afresh)",
                                TerminalText.inline(id), TerminalText.inline(version.version), TerminalText.inline(name)))
                    }
                }
            }
            return history
        } catch let error as PublishError {
            throw error
        } catch {
            throw PublishError(path, L.localized("cannot read the publish history: %1$s (move it away to start afresh)", "\(errorMessage(error))"))
        }
    }

    /// The bytes of the regular file at `path` (a link to one counts), read without waiting on
    /// anything (``RegularFile``): a FIFO, a device or a folder in its place is said as what it is
    /// (found by an attack: a FIFO as `catalog.json` was said as "permission denied"). Other
    /// failures are thrown as they come, for the caller to name.
    static func readRegularFile(_ path: String) throws -> Data {
        do {
            return try RegularFile(forReadingAtPath: path).readAll()
        } catch let error as RegularFileError where error.kind == .badData {
            throw PublishError(path, L.localized("it is not a regular file (a FIFO, a device or a folder): move it away to publish afresh"), kind: .io)
        }
    }

    /// One name of a file in its folder: not empty, not `.` or `..`, no `/` and no NUL.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(where: { $0 == 0x2F || $0 == 0 })
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// One published version of a region: what its catalog entry needs, and where its files are.
struct PublishedVersion: Codable, Equatable {
    var version: String
    /// SHA-256 of the MBTiles file it was made from: how an unchanged input is recognised.
    var sourceSHA256: String
    /// martin's `agg_tiles_hash` of its tiles.
    var contentHash: String
    /// File name in `packages/`.
    var package: String
    var size: Int64
    var sha256: String
    var installedSize: Int64
    var format: String
    var bounds: [Double]?
    var minzoom: Int
    var maxzoom: Int
    var deltas: [PublishedDelta] = []
    /// File name in `.publish/bases/` of the copy deltas are made from, when kept.
    var base: String?
}

/// A delta package from an earlier version to the one holding it.
struct PublishedDelta: Codable, Equatable {
    var fromVersion: String
    var fromHash: String
    /// File name in `packages/`.
    var package: String
    var size: Int64
    var sha256: String
}
