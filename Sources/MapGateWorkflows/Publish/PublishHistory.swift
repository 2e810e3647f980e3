import FoundationEssentials
import MapGateBase

/// What `publish` remembers between runs, in `OUT_DIR/.publish/history.json`: for each region,
/// the versions it keeps (newest first) with their packages, deltas and base copies.
struct PublishHistory: Codable, Equatable {
    var formatVersion = 1
    var regions: [String: [PublishedVersion]] = [:]

    static func load(path: String) throws -> PublishHistory {
        guard FileManager.default.fileExists(atPath: path) else { return PublishHistory() }
        do {
            let history = try JSONDecoder().decode(PublishHistory.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            guard history.formatVersion == 1 else {
                throw PublishError(path, L.localized("formatVersion %1$s is not supported (mapgate reads 1)", "\(history.formatVersion)"))
            }
            return history
        } catch let error as PublishError {
            throw error
        } catch {
            throw PublishError(path, L.localized("cannot read the publish history: %1$s (move it away to start afresh)", "\(errorMessage(error))"))
        }
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
