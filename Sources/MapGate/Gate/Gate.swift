import Foundation

/// The version gate: looks the store up, keeps its state in the state database, and decides
/// each use. Confined to one thread (it owns a database connection).
public final class Gate {
    public let policy: GatePolicy
    private let state: StateDatabase
    private let clock: Clock
    private let lookup: StoreLookup?
    private let checkInterval: TimeInterval

    /// - Parameter installed: the app's version; ``BuildInfo/version`` everywhere but in the
    ///   tests and the demo's "after the update" step. Package access: no user can reach it.
    package init(
        state: StateDatabase, configuration: Configuration, client: HTTPClient, clock: Clock, installed: AppVersion
    ) {
        policy = GatePolicy(installed: installed, graceDays: configuration.graceDays, maxPrompts: configuration.maxPrompts)
        self.state = state
        self.clock = clock
        checkInterval = configuration.checkIntervalHours * 3600
        let configured = configuration.appID != nil || configuration.bundleID != nil
        lookup = configured ? StoreLookup(configuration: configuration, client: client) : nil
    }

    package convenience init(
        directory: DataDirectory, configuration: Configuration, client: HTTPClient, clock: Clock, installed: AppVersion
    ) throws {
        self.init(
            state: try StateDatabase(directory: directory, clock: clock), configuration: configuration, client: client,
            clock: clock, installed: installed)
    }

    /// The gate of the installed app (``BuildInfo/version``) over an open state database.
    public convenience init(
        state: StateDatabase, configuration: Configuration, client: HTTPClient, clock: Clock = .system
    ) throws {
        // The compiled-in version is valid by construction; a typo there fails every test.
        self.init(state: state, configuration: configuration, client: client, clock: clock, installed: try AppVersion(BuildInfo.version))
    }

    public convenience init(
        directory: DataDirectory, configuration: Configuration, client: HTTPClient, clock: Clock = .system
    ) throws {
        try self.init(state: try StateDatabase(directory: directory, clock: clock), configuration: configuration, client: client, clock: clock)
    }

    /// Looks the store up now (`mapgate check`). A failed lookup is in the report's
    /// `lookupError`; the saved state still decides.
    public func check() throws -> GateReport {
        guard let lookup else { throw LookupError.notConfigured }
        // The user asked for this lookup: give the network more time than an ordinary run does.
        var patient = lookup
        patient.connectTimeout = 10
        return try refresh(using: patient)
    }

    /// The gate from the saved state, without the network (`mapgate status`).
    public func status() throws -> GateReport {
        try update { record, now in report(record, now: now, error: nil) }
    }

    /// Decides one use (sync, open, serve, tile): looks up when due, counts the use when it
    /// prompts, and throws ``GateClosedError`` when the gate is closed.
    public func authorizeUse() throws -> GateAuthorization {
        var lookupError: LookupError?
        if let lookup, try isLookupDue() {
            lookupError = try refresh(using: lookup).lookupError
        }
        let (decision, useReport) = try update { record, now -> (UseDecision, GateReport) in
            let decision = policy.use(&record, at: now)
            return (decision, report(record, now: now, error: lookupError))
        }
        if decision == .refused { throw closedError(useReport) }
        return GateAuthorization(decision: decision, report: useReport)
    }

    /// Looks the store up if an ordinary run would now (on the check interval), without
    /// counting a use; nil when no lookup was due. A running server calls this.
    public func refreshIfDue() throws -> GateReport? {
        guard let lookup, try isLookupDue() else { return nil }
        return try refresh(using: lookup)
    }

    func closedError(_ report: GateReport) -> GateClosedError {
        GateClosedError(
            installedVersion: policy.installed.text, requiredVersion: report.requiredVersion ?? "newer",
            storeURL: report.storeURL)
    }

    private func isLookupDue() throws -> Bool {
        try update { record, now in
            guard let last = record.lastAttemptAt else { return true }
            // A failed attempt is retried after an hour at most, a good one after the interval.
            let interval = record.lastLookupError == nil ? checkInterval : min(checkInterval, 3600)
            return now.timeIntervalSince(last) >= interval
        }
    }

    private func refresh(using lookup: StoreLookup) throws -> GateReport {
        // The network call runs outside any transaction so no lock is held while waiting.
        let result = Result { try lookup.fetch() }
        return try update { record, now in
            switch result {
            case .success(let release):
                try policy.record(release, at: now, into: &record)
                return report(record, now: now, error: nil)
            case .failure(let error):
                let failure = error as? LookupError ?? .network(error.localizedDescription)
                policy.recordFailure(failure.localizedDescription, at: now, into: &record)
                return report(record, now: now, error: failure)
            }
        }
    }

    /// Runs `body` on the saved record in one write transaction, after moving the clock's
    /// high-water mark and reconciling with the installed version, then saves it.
    private func update<T>(_ body: (inout GateRecord, Date) throws -> T) throws -> T {
        try state.database.transaction(.immediate) {
            var record = try GateRecord.load(from: state.database)
            let now = policy.advanceClock(&record, reading: clock.now)
            policy.reconcile(&record)
            let result = try body(&record, now)
            try record.save(to: state.database)
            return result
        }
    }

    private func report(_ record: GateRecord, now: Date, error: LookupError?) -> GateReport {
        GateReport(
            installedVersion: policy.installed.text, record: record, phase: policy.phase(of: record, at: now),
            graceEnd: record.pendingVersion == nil ? nil : policy.graceEnd(of: record),
            maxPrompts: policy.maxPrompts, now: now,
            lookupError: error, recoveryNote: state.recoveryNote)
    }
}
