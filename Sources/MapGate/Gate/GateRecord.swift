import Foundation

/// What the version gate remembers between runs (one row of the state database).
public struct GateRecord: Sendable, Equatable {
    /// The newer store version waiting to be installed, or nil when up to date.
    public var pendingVersion: String?
    /// When `pendingVersion` (or the first newer version before it) was first seen.
    public var firstSeen: Date?
    /// Prompts shown, i.e. uses counted, since the grace period ended.
    public var promptsShown: Int = 0
    /// The latest clock reading ever seen. An earlier reading counts as this one, so setting the
    /// clock back neither restarts the grace period nor gives uses back.
    public var latestClock: Date?
    /// The last good lookup answer and when it came.
    public var lastRelease: StoreRelease?
    public var lastLookupAt: Date?
    /// The last lookup attempt, good or not, and its error when it failed.
    public var lastAttemptAt: Date?
    public var lastLookupError: String?

    public init() {}

    /// Forgets the pending version and the count (the app was updated or the release pulled).
    mutating func resetPending() {
        pendingVersion = nil
        firstSeen = nil
        promptsShown = 0
    }
}
