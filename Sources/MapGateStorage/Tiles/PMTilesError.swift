import FoundationEssentials
import MapGateBase

/// A PMTiles archive that cannot be read or written, with the reason: `world.pmtiles: not a
/// PMTiles archive: bad magic`. Every malformed archive ends here, never in a trap.
public struct PMTilesError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let path: String
    public let reason: String
    public let kind: FailureKind

    public init(path: String, reason: String, kind: FailureKind = .badData) {
        self.path = path
        self.reason = reason
        self.kind = kind
    }

    public var errorDescription: String? { "\(path): \(reason)" }
}
