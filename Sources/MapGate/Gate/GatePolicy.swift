import Foundation

/// Where the gate stands at one moment.
public enum GatePhase: Sendable, Equatable {
    /// No newer version is known.
    case upToDate
    /// A newer version is known; prompts start at `until`.
    case grace(until: Date)
    /// Past the grace period: each use prompts; `usesLeft` counts the prompt about to be shown.
    case prompting(usesLeft: Int)
    /// All prompted uses are spent: the app must be updated.
    case closed

    public var isClosed: Bool { self == .closed }
}

/// What one use (sync, open, serve, tile) is told.
public enum UseDecision: Sendable, Equatable {
    /// Go ahead silently.
    case allowed
    /// Go ahead; a newer version exists but the grace period runs until the given date.
    case notice(until: Date)
    /// Show "update now / later"; this use was counted and `usesLeft` were left before it.
    case prompt(usesLeft: Int)
    /// Refuse: the gate is closed.
    case refused
}

/// The owner's rules, as pure functions of the saved record and the time. No I/O here.
public struct GatePolicy: Sendable {
    public var installed: AppVersion
    public var graceDays: Int
    public var maxPrompts: Int

    public init(installed: AppVersion, graceDays: Int = 30, maxPrompts: Int = 5) {
        self.installed = installed
        self.graceDays = graceDays
        self.maxPrompts = maxPrompts
    }

    /// Reads the clock through the record's high-water mark and moves the mark forward.
    public func advanceClock(_ record: inout GateRecord, reading: Date) -> Date {
        let now = max(reading, record.latestClock ?? reading)
        record.latestClock = now
        return now
    }

    /// Resets the record when its pending version is no longer newer than the installed app
    /// (the app was updated), so an update opens the gate at once, even offline.
    public func reconcile(_ record: inout GateRecord) {
        guard let pending = record.pendingVersion else { return }
        guard let version = try? AppVersion(pending), installed < version else {
            record.resetPending()
            return
        }
    }

    /// Takes in a good lookup answer.
    ///
    /// A first newer version starts the grace period. A further newer version while one is
    /// pending keeps the original start, so frequent releases never postpone the gate. A store
    /// version that is not newer than the installed app resets everything.
    public func record(_ release: StoreRelease, at now: Date, into record: inout GateRecord) throws {
        let store = try AppVersion(release.version)
        record.lastRelease = release
        record.lastLookupAt = now
        record.lastAttemptAt = now
        record.lastLookupError = nil
        guard installed < store else {
            record.resetPending()
            return
        }
        if record.pendingVersion == nil {
            record.firstSeen = now
            record.promptsShown = 0
        }
        record.pendingVersion = store.text
    }

    /// Notes a failed lookup. It changes nothing else: going offline is no way around the gate.
    public func recordFailure(_ message: String, at now: Date, into record: inout GateRecord) {
        record.lastAttemptAt = now
        record.lastLookupError = message
    }

    public func graceEnd(of record: GateRecord) -> Date? {
        record.firstSeen.map { $0.addingTimeInterval(TimeInterval(graceDays) * 86_400) }
    }

    public func phase(of record: GateRecord, at now: Date) -> GatePhase {
        guard record.pendingVersion != nil, let graceEnd = graceEnd(of: record) else { return .upToDate }
        if now < graceEnd { return .grace(until: graceEnd) }
        let left = maxPrompts - record.promptsShown
        return left > 0 ? .prompting(usesLeft: left) : .closed
    }

    /// Decides one use and counts it when it prompts.
    public func use(_ record: inout GateRecord, at now: Date) -> UseDecision {
        switch phase(of: record, at: now) {
        case .upToDate: return .allowed
        case .grace(let until): return .notice(until: until)
        case .closed: return .refused
        case .prompting(let usesLeft):
            record.promptsShown += 1
            return .prompt(usesLeft: usesLeft)
        }
    }
}
