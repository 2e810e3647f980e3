import FoundationEssentials
import MapGateBase

/// A tile delta that cannot be made or applied: the file concerned and why.
public struct DeltaError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// The file is missing.
        case missingFile
        /// The file is no MBTiles file (no `tiles` or no `metadata`).
        case notMBTiles(String)
        /// The file is no delta: a required metadata key is missing, or the tiles cannot be read.
        case notADelta(String)
        /// A delta was given where a full tileset is expected (it carries the before/after keys).
        case isADelta
        /// The delta was made for another base: the base's `agg_tiles_hash` differs.
        case baseMismatch(expected: String, actual: String)
        /// Applying the delta did not give the tileset it promises.
        case resultMismatch(expected: String, actual: String)
        /// Applying the delta did not give the change of ``TilesLtHash`` it carries (the first 16
        /// hex digits of each digest): a delta made wrong, or a base whose replaced tiles changed.
        case resultTilesMismatch(expected: String, actual: String)
        /// The file holds something the delta format or this implementation cannot handle.
        case unsupported(String)
        /// A file whose text is not UTF-8 (`PRAGMA encoding`: UTF-16le or UTF-16be): SQLite
        /// attaches no such file to a UTF-8 one, and a delta is made and applied across two.
        case textEncoding(String)
        /// This many tiles have a `tile_column` or `tile_row` stored as REAL (3.0): hashed as
        /// text they differ from the integers a delta's rows become in its base.
        case realCoordinates(Int)
        /// The output file of a new delta already exists.
        case outputExists
        /// Tiles were handed to an incremental hash out of (zoom, column, row) order.
        case outOfOrder(String)
    }

    /// The file concerned (the delta, the base or the output).
    public let path: String
    public let reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var kind: FailureKind {
        switch reason {
        case .missingFile, .outputExists: .io
        default: .badData
        }
    }

    public var errorDescription: String? { "\(path): \(reasonText)" }

    /// Why, without the file's name.
    public var reasonText: String {
        let text: String
        switch reason {
        case .missingFile: text = L.localized("no such file")
        case .notMBTiles(let detail): text = L.localized("not an MBTiles file: %1$s", "\(detail)")
        case .notADelta(let detail): text = L.localized("not a tile delta: %1$s", "\(detail)")
        case .isADelta: text = L.localized("this is a tile delta (it has agg_tiles_hash_before_apply/after_apply), not a full tileset")
        case .baseMismatch(let expected, let actual):
            text = L.localized("the delta is made for other tiles: it expects a base whose agg_tiles_hash is %1$s, and the base's is %2$s", expected, actual)
        case .resultMismatch(let expected, let actual):
            text = L.localized(
                "applied, the delta gives tiles whose agg_tiles_hash is %1$s, not the %2$s it promises, so it was not used (the file it was applied to is left as it was)", actual, expected)
        case .resultTilesMismatch(let expected, let actual):
            text = L.localized(
                "applied, the delta gives other tiles than it promises (the LtHash of its changes is %1$s…, not %2$s…: either the delta was made wrong, or the installed tiles it replaces are not the ones it was made for), so it was not used (the file it was applied to is left as it was)",
                actual, expected)
        case .unsupported(let detail): text = detail
        case .textEncoding(let encoding): text = L.localized("its text encoding is %1$s, and a delta needs UTF-8 files (SQLite's default)", encoding)
        case .realCoordinates(let count):
            text = L.localized("%1$s tiles have a tile_column or tile_row stored as a REAL number (such as 3.0), which a delta cannot carry", "\(count)")
        case .outputExists: text = L.localized("the output file already exists")
        case .outOfOrder(let detail): text = L.localized("tiles out of order: %1$s", detail)
        }
        return text
    }
}
