import FoundationEssentials
import MapGateBase

/// Where the gate stands at one moment.
public enum GatePhase: Sendable, Equatable {
    /// No newer version is known.
    case upToDate
    /// A newer version is known; prompts start at `until`.
    case grace(until: Date)
    /// Past the grace period: each use prompts; `usesLeft` counts the prompt about to be shown.
    case prompting(usesLeft: Int)
    /// All prompted uses are spent (or `closeAfterDays` passed): the app must be updated.
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
    /// Days after the grace period when the gate closes whatever the count; nil: never.
    public var closeAfterDays: Int?
    /// The publisher's critical update: an installed app below it is closed at once.
    public var minimumAppVersion: AppVersion?
    /// Days map data may be used before the record has reached the store once (``GateSettings/firstLookupDays``).
    public var firstLookupDays: Int?

    /// How long one counted use lets a server serve.
    public static let servingDay: TimeInterval = 86_400

    /// Gated uses after which a lookup is due whatever the clock says (a frozen clock never
    /// makes one due by time).
    public static let maximumUsesBetweenLookups = 20

    public init(
        installed: AppVersion, graceDays: Int = ProductProfile.graceDays, maxPrompts: Int = ProductProfile.maxPrompts, closeAfterDays: Int? = nil
    ) {
        self.installed = installed
        self.graceDays = graceDays
        self.maxPrompts = maxPrompts
        self.closeAfterDays = closeAfterDays
    }

    public init(installed: AppVersion, settings: GateSettings) {
        self.init(installed: installed, graceDays: settings.graceDays, maxPrompts: settings.maxPrompts, closeAfterDays: settings.closeAfterDays)
        firstLookupDays = settings.firstLookupDays
    }

    /// Whether the next use must wait for a successful lookup because the record never had one:
    /// map data is installed and ``firstLookupDays`` have passed since the record's first use
    /// (issue 35, item 8). A record that reached the store once is never held to this.
    public func needsFirstLookup(_ record: GateRecord, at now: Date) -> Bool {
        guard let days = firstLookupDays, record.lastLookupAt == nil, !record.installedRegions.isEmpty, let began = record.firstUseAt else { return false }
        return now.timeIntervalSince(began) >= TimeInterval(days) * 86_400
    }

    private var grace: TimeInterval { TimeInterval(graceDays) * 86_400 }

    /// These rules with a signed catalog's `gate` object applied (its values win).
    public func applying(_ gate: PublisherGate?) -> GatePolicy {
        guard let gate else { return self }
        var policy = self
        if let days = gate.graceDays { policy.graceDays = days }
        if let prompts = gate.maxPrompts { policy.maxPrompts = prompts }
        if let days = gate.closeAfterDays { policy.closeAfterDays = days }
        if let minimum = gate.minimumAppVersion.flatMap({ try? AppVersion($0) }) { policy.minimumAppVersion = minimum }
        return policy
    }

    /// `gate` with each rule no looser than these: what a catalog signed by a key that may not
    /// loosen the gate (``GateSettings/gateRuleKeys``) is allowed to say.
    public func tightening(_ gate: PublisherGate) -> PublisherGate {
        var tight = gate
        tight.graceDays = gate.graceDays.map { min($0, graceDays) }
        tight.maxPrompts = gate.maxPrompts.map { min($0, maxPrompts) }
        if let days = gate.closeAfterDays, let limit = closeAfterDays { tight.closeAfterDays = min(days, limit) }
        // Nor a minimum version below the one in force.
        if let theirs = gate.minimumAppVersion.flatMap({ try? AppVersion($0) }), let mine = minimumAppVersion, theirs < mine {
            tight.minimumAppVersion = mine.text
        }
        return tight
    }

    /// These rules made no looser than `rules` (each of its rules that is stricter wins).
    public func tightened(by rules: PublisherGate) -> GatePolicy {
        applying(tightening(rules))
    }

    /// `earlier` (the strictest rules kept so far) with each of these rules that is stricter than
    /// both it and the profile's (``ProductProfile``) taken in: what an unsigned managed policy
    /// adds to ``GateRecord/strictestRules``. Nil while nothing is stricter than the profile.
    public func strictestRules(keeping earlier: PublisherGate?) -> PublisherGate? {
        func lower(_ kept: Int?, _ mine: Int, beyond profile: Int?) -> Int? {
            let candidate = profile.map { mine < $0 ? mine : nil } ?? mine
            switch (kept, candidate) {
            case (let kept?, let candidate?): return min(kept, candidate)
            default: return kept ?? candidate
            }
        }
        let rules = PublisherGate(
            graceDays: lower(earlier?.graceDays, graceDays, beyond: ProductProfile.graceDays),
            maxPrompts: lower(earlier?.maxPrompts, maxPrompts, beyond: ProductProfile.maxPrompts),
            closeAfterDays: closeAfterDays.map { lower(earlier?.closeAfterDays, $0, beyond: ProductProfile.settings.closeAfterDays) } ?? earlier?.closeAfterDays)
        return rules == PublisherGate() ? nil : rules
    }

    /// True when the publisher requires a newer app than this one: closed, no grace, no uses.
    public var isBelowMinimum: Bool { minimumAppVersion.map { installed < $0 } ?? false }

    /// Reads the clock through the record's high-water mark and moves the mark forward. On the
    /// same boot as the mark was set (`boot`, the kernel's, which faketime cannot move), the time is
    /// at least the mark plus the boot time since: a wall clock frozen, crawling or set back does
    /// not stop the gate's time within a boot.
    public func advanceClock(_ record: inout GateRecord, reading: Date, boot: BootReading? = nil) -> Date {
        var now = max(reading, record.latestClock ?? reading)
        if let boot, let latest = record.latestClock, record.bootID == boot.id, let then = record.bootSeconds, boot.seconds >= then {
            now = max(now, latest.addingTimeInterval(boot.seconds - then))
        }
        record.latestClock = now
        if let boot {
            record.bootID = boot.id
            record.bootSeconds = boot.seconds
        }
        return now
    }

    /// Resets the record when its pending version is no longer newer than the installed app
    /// (the app was updated), so an update opens the gate at once, even offline.
    /// A pending version that no longer reads as a version (a record from a mapgate that read
    /// versions otherwise) fails closed: the record recovers, and the next good lookup decides.
    ///
    /// An update to the version whose sighting started the count, or past it, while a still newer
    /// one is pending (the store's cache a release behind offered it) starts the newer one's own
    /// grace, from its release date, with no use counted (found by an attack: the user who updated
    /// stayed at the old count, with no grace for a version out a few days).
    public func reconcile(_ record: inout GateRecord, at now: Date) {
        guard let pending = record.pendingVersion else { return }
        guard let version = try? AppVersion(pending) else {
            record.isRecovering = true
            return
        }
        if version <= installed {
            record.resetPending()
            return
        }
        guard let counting = record.countingFor.flatMap({ try? AppVersion($0) }), counting <= installed else { return }
        let released = record.lastRelease.flatMap { release in (try? AppVersion(release.version)) == version ? release.releaseDate : nil }
        record.firstSeen = min(released ?? now, now)
        record.promptsShown = 0
        // Days paid under the old count are no day of the new one's (found by a review: an old
        // count could equal a new one and run a last day).
        record.servingDays = []
        record.notNewerSince = nil
        record.countingFor = pending
    }

    /// How long the store must keep saying "not newer" before a pending version is forgotten.
    /// The App Store's lookup answers an older version for a day or more after a release (its
    /// CDN cache), so one such answer is no evidence that the release was pulled: an answer that
    /// is not newer starts this wait, a later one after it ends the pending version, and a newer
    /// one in between cancels it.
    public static let withdrawalConfirmation: TimeInterval = 86_400

    /// Whether an ordinary run should look the store up now: on the interval after a good lookup,
    /// within an hour after a failed one, and at once when recovering, when the clock reads
    /// earlier than the last attempt (a clock set back is a reason to look, not to wait), when it
    /// has not moved since the last use (a frozen clock), or after
    /// ``maximumUsesBetweenLookups`` uses without a lookup attempt.
    public func isLookupDue(_ record: GateRecord, reading: Date, now: Date, interval: TimeInterval) -> Bool {
        if record.isRecovering || needsFirstLookup(record, at: now) { return true }
        guard let last = record.lastAttemptAt else { return true }
        if reading < last { return true }
        if let previous = record.lastUseReading, reading <= previous { return true }
        if record.usesSinceLookup >= Self.maximumUsesBetweenLookups { return true }
        let wait = record.lastLookupError == nil ? interval : min(interval, 3600)
        return now.timeIntervalSince(last) >= wait
    }

    /// Takes in a good lookup answer; returns the time to decide with from now on.
    ///
    /// - `trustedTime` (an HTTPS answer's `Date`) becomes the clock's high-water mark, replacing
    ///   one a wrong clock pushed into the future; no recorded moment stays later than it.
    /// - A first newer version starts the grace period at the earlier of now and its release
    ///   date, so neither fresh state nor a sighting far in the future buys a new 30 days (at the
    ///   release date when that is later than a clock no trusted time vouches for: the clock is
    ///   behind). Each later answer can move it earlier, never later. A
    ///   further newer version while one is pending keeps the original start. A store version that
    ///   is not newer than the installed app forgets a pending version only when the store says so
    ///   again at least ``withdrawalConfirmation`` later (a stale answer refunds nothing).
    /// - A recovering record (lost state while map data was installed) takes a newer version
    ///   whose grace is over as having no uses left.
    ///
    /// With `tightenOnly` (an answer obtained in a user namespace of the user's own, where they may
    /// answer for the store: ``UserNamespace``) the answer can only make the gate stricter: its
    /// trusted time only moves the clock forward, it never resets a pending version, and never
    /// ends a recovery (that lookup is noted as failed).
    @discardableResult
    public func record(
        _ release: StoreRelease, trustedTime: Date? = nil, at reading: Date, into record: inout GateRecord, tightenOnly: Bool = false
    ) throws -> Date {
        let store = try AppVersion(release.version)
        var now = reading
        if tightenOnly, let trustedTime, trustedTime > reading {
            // Inside a namespace the user controls, an HTTPS answer's time may still move the
            // clock forward: that only tightens (a clock held still with `unshare --time` and
            // faketime reaches the end of the grace once a lookup succeeds). Never back.
            now = trustedTime
            record.latestClock = max(record.latestClock ?? trustedTime, trustedTime)
        }
        if tightenOnly {
            if record.isRecovering {
                recordFailure(Self.confinedRecovery, at: now, into: &record)
                return now
            }
            guard installed < store else {
                // "Up to date" from a namespace the user controls changes nothing but when it was asked.
                record.lastAttemptAt = now
                record.lastLookupAt = now
                record.lastLookupError = nil
                record.usesSinceLookup = 0
                return now
            }
        }
        if let trustedTime, !tightenOnly {
            now = trustedTime
            record.latestClock = trustedTime
            // A catalog judged by the clock's reading while the gate's clock ran ahead is judged
            // by the gate's clock again now that trusted time has set it (found by an attack: the
            // lead, measured against the clock that was wrong, kept a catalog the store's time
            // called expired months ago).
            for signer in record.catalogSerials.keys { record.catalogSerials[signer]?.lead = nil }
            for keyPath in [\GateRecord.firstSeen, \.lastAttemptAt, \.lastLookupAt] {
                if let date = record[keyPath: keyPath], date > trustedTime { record[keyPath: keyPath] = trustedTime }
            }
        }
        let recovering = record.isRecovering
        record.isRecovering = false
        record.lastRelease = release
        record.lastLookupAt = now
        record.lastAttemptAt = now
        record.lastLookupError = nil
        record.usesSinceLookup = 0
        guard installed < store else {
            guard record.pendingVersion != nil else { return now }
            let since = record.notNewerSince ?? now
            record.notNewerSince = since
            if now.timeIntervalSince(since) >= Self.withdrawalConfirmation { record.resetPending() }
            return now
        }
        record.notNewerSince = nil
        if record.pendingVersion == nil {
            record.promptsShown = 0
            record.countingFor = store.text
        }
        // When it was first seen: the store's release date, or now if earlier (a date later
        // than the clock names no sighting yet). A date later than a clock nothing vouches for
        // (a plain-HTTP lookup, no trusted time) shows the clock behind, since no version is
        // released in the future: the date is taken (found by an attack: a first sighting a year
        // behind took that year's date, and the grace was over before the version came out).
        // An answer from a namespace the user controls is never taken past the clock.
        var sighted = now
        if let released = release.releaseDate { sighted = trustedTime == nil && !tightenOnly ? released : min(released, now) }
        record.firstSeen = min(record.firstSeen ?? sighted, sighted)
        // The newest version seen stays the one required: a store answer that names an older one
        // (a cache a release behind; found by an attack) does not lower it, so installing that
        // older version does not clear the count and start a new grace. A release really pulled
        // shows as the store naming nothing newer than the installed app (``withdrawalConfirmation``).
        if let pending = record.pendingVersion.flatMap({ try? AppVersion($0) }), store < pending {
            // Kept as it is; the rest (a recovering record's fail-closed start) as for any answer.
        } else {
            record.pendingVersion = store.text
        }
        if recovering {
            // Without a release date the grace cannot be shown to be running: fail closed.
            if release.releaseDate == nil { record.firstSeen = now.addingTimeInterval(-grace) }
            if case .grace = phase(of: record, at: now) {} else { record.promptsShown = max(record.promptsShown, maxPrompts) }
        }
        // Decided after attacks: a use counted while the clock was ahead (offline, its
        // high-water mark holding) is not given back when trusted time shows the grace still
        // running. Trusted time cannot tell a clock that was ahead from an answer a cache kept
        // (its `Date` days old): a refund on it gave back uses rightly spent, and with the clock
        // set back as well, every use, a closed gate included.
        return now
    }

    /// Why a lookup in a user namespace of the user's own ended no recovery.
    static let confinedRecovery =
        "a store answer obtained inside a user namespace (a container or `unshare`) cannot restore lost gate state: run 'mapgate check' outside it once"

    /// Notes a failed lookup. It changes nothing else: going offline is no way around the gate.
    public func recordFailure(_ message: String, at now: Date, into record: inout GateRecord) {
        record.lastAttemptAt = now
        record.lastLookupError = message
        record.usesSinceLookup = 0
    }

    public func graceEnd(of record: GateRecord) -> Date? {
        record.firstSeen.map { $0.addingTimeInterval(grace) }
    }

    public func phase(of record: GateRecord, at now: Date) -> GatePhase {
        if isBelowMinimum { return .closed }
        guard record.pendingVersion != nil, let graceEnd = graceEnd(of: record) else { return .upToDate }
        if now < graceEnd { return .grace(until: graceEnd) }
        if let closeAfterDays, now >= graceEnd.addingTimeInterval(TimeInterval(closeAfterDays) * 86_400) { return .closed }
        let left = maxPrompts - record.promptsShown
        return left > 0 ? .prompting(usesLeft: left) : .closed
    }

    /// Whether the gate is closed only by prompted uses that runs still hold undelivered
    /// (``GateRecord/reservations``: a question not answered yet, a system-mode session before
    /// its first tile): each may yet be given back, so another run must wait rather than take the
    /// gate for closed, and a running server keeps the day it has (``isClosedForServer(_:promptsShown:ownCount:servedFor:isHeld:)``).
    ///
    /// - Parameter held: how many of the record's reservations count: those of other processes
    ///   (a server's own undelivered use does not hold the gate open for it).
    public func isClosedByHeldUses(_ record: GateRecord, held: Int, at now: Date) -> Bool {
        guard held > 0, phase(of: record, at: now).isClosed else { return false }
        var givenBack = record
        givenBack.promptsShown = max(0, record.promptsShown - held)
        return !phase(of: givenBack, at: now).isClosed
    }

    /// Decides one use and counts it when it prompts.
    public func use(_ record: inout GateRecord, at now: Date) -> UseDecision {
        let phase = phase(of: record, at: now)
        if !phase.isClosed { record.usesSinceLookup = min(record.usesSinceLookup + 1, GateRecord.maximumCount) }
        switch phase {
        case .upToDate: return .allowed
        case .grace(let until): return .notice(until: until)
        case .closed: return .refused
        case .prompting(let usesLeft):
            record.promptsShown += 1
            return .prompt(usesLeft: usesLeft)
        }
    }

    /// Gives back one prompted use that was reserved but not delivered (``Gate/settle(_:)``).
    /// Only while an update is still pending and a use is counted: an update installed (or a
    /// release pulled) in between already reset the count. Returns whether a use was given back.
    public func giveBack(_ record: inout GateRecord) -> Bool {
        guard record.pendingVersion != nil, record.promptsShown > 0 else { return false }
        record.promptsShown -= 1
        return true
    }

    // MARK: Serving

    /// Whether a running server must count its next use: past the grace period, once a day of
    /// serving has passed since its last counted use and tiles were answered since (a use is
    /// counted when delivered: an idle server costs nothing).
    ///
    /// - Parameters:
    ///   - servedFor: seconds since the server's last counted use: the larger of what the clock
    ///     says and the real time elapsed, so that neither a clock set back nor one slowed down
    ///     or frozen stretches a day of serving.
    ///   - answeredTiles: whether the server answered a tile since the day of its last counted use
    ///     ended (those before it are that use's).
    public func isServingUseDue(_ phase: GatePhase, servedFor: TimeInterval, answeredTiles: Bool = true) -> Bool {
        guard case .prompting = phase, answeredTiles else { return false }
        return servedFor >= Self.servingDay
    }

    /// Whether a running server must refuse tiles: the gate is closed, unless the use that closed
    /// it is this server's own and less than a day old (the last use runs its day, as the last use
    /// of any command runs that command).
    ///
    /// While the gate is closed only by uses other runs hold (``isClosedByHeldUses(_:held:at:)``),
    /// the server serves out the day of its last counted use: the held use may come back, and
    /// holding questions open gives no server more than the day it has.
    ///
    /// - Parameters:
    ///   - ownCount: `promptsShown` right after this server's last counted use, if any.
    ///   - isHeld: ``GateReport/isHeld``.
    public func isClosedForServer(_ phase: GatePhase, promptsShown: Int, ownCount: Int?, servedFor: TimeInterval, isHeld: Bool = false) -> Bool {
        guard phase.isClosed else { return false }
        let dayRunning = servedFor < Self.servingDay
        let ownUseRunning = (ownCount == promptsShown || isHeld) && dayRunning
        return !ownUseRunning
    }

    /// Until when a server may serve on its own last use, or nil when that does not apply.
    public func lastServingDay(_ phase: GatePhase, promptsShown: Int, ownCount: Int?, lastCounted: Date) -> Date? {
        guard phase.isClosed, ownCount == promptsShown else { return nil }
        return lastCounted.addingTimeInterval(Self.servingDay)
    }

    // MARK: Days of servers that died

    /// The day of serving that a server which died without stopping (a crash, SIGKILL, the
    /// kernel's OOM killer: no choice of the user's) paid for and did not finish, which a server
    /// starting now serves out without a use: its index in ``GateRecord/servingDays``, or nil.
    /// Only on the boot it was paid on (the boot clock measures the day: no clock setting
    /// stretches it), only while less than a day has passed by both the gate's time and the boot
    /// clock, and only while the dead server itself would still be serving
    /// (``isClosedForServer(_:promptsShown:ownCount:servedFor:isHeld:)``: its own last use runs its
    /// day, another's closed gate does not). Of several, the one paid last.
    ///
    /// - Parameters:
    ///   - namespace: the PID namespace of the server starting (``PIDNamespace``): only a day of a
    ///     server of the same namespace is taken over, as only there does its process id tell
    ///     whether it runs (found by a review: a server in a namespace of its own looked ended from
    ///     outside, and one outside from within, so servers side by side took one day by turns).
    ///   - isHeld: whether the gate is closed only by uses other runs hold
    ///     (``isClosedByHeldUses(_:held:at:)``): the dead server would serve on through its day.
    ///   - isRunning: whether a process still runs (``ProcessIdentity/isRunning``): a server that
    ///     runs, or is only stopped, keeps its day.
    ///   - owner: in system mode, the user whose session starts (``GateRecord/ServingDay/owner``):
    ///     only a day of that user's is taken over.
    public func unfinishedServingDay(
        _ record: GateRecord, boot: BootReading?, namespace: UInt64?, owner: UInt32? = nil, at now: Date, isHeld: Bool, isRunning: (ProcessIdentity) -> Bool
    ) -> Int? {
        guard let boot, let namespace, record.pendingVersion != nil else { return nil }
        let phase = phase(of: record, at: now)
        var found: Int?
        for (index, day) in record.servingDays.enumerated()
        where day.process.boot == boot.id && day.namespace == namespace && day.owner == owner && !isRunning(day.process) {
            let served = servedFor(day, boot: boot, at: now)
            let closed = isClosedForServer(phase, promptsShown: record.promptsShown, ownCount: day.count, servedFor: served, isHeld: isHeld)
            guard served < Self.servingDay, !closed else { continue }
            if found.map({ record.servingDays[$0].paidAt < day.paidAt }) ?? true { found = index }
        }
        return found
    }

    /// Seconds served of `day` by now: the larger of what the gate's time and the boot clock say.
    /// A boot clock behind the day's on the same boot was set back (a time namespace): the day
    /// is over.
    public func servedFor(_ day: GateRecord.ServingDay, boot: BootReading, at now: Date) -> TimeInterval {
        guard boot.seconds >= day.bootSeconds else { return .infinity }
        return max(now.timeIntervalSince(day.paidAt), boot.seconds - day.bootSeconds)
    }

    /// Notes that the server `process` (of PID namespace `namespace`) paid a day with its use
    /// counted `count` (delivered now): it replaces the day that server had before.
    public func recordServingDay(
        _ record: inout GateRecord, process: ProcessIdentity, namespace: UInt64?, owner: UInt32? = nil, count: Int, at now: Date, boot: BootReading
    ) {
        record.servingDays.removeAll { $0.process == process }
        record.servingDays.append(
            GateRecord.ServingDay(
                process: process, namespace: namespace, count: count, paidAt: now, bootSeconds: boot.seconds, takenOver: false, owner: owner))
        // Bounded, so that a record stays plausible however many servers run (the oldest first).
        if record.servingDays.count > GateRecord.maximumServingDays {
            record.servingDays.sort { $0.paidAt < $1.paidAt }
            record.servingDays.removeFirst(record.servingDays.count - GateRecord.maximumServingDays)
        }
    }

    /// Forgets the days no server can take over any more: paid on another boot, or over (a
    /// running server whose day is over pays its next one anew). Whether their servers run is
    /// not asked: from another PID namespace a running one looks ended.
    public func forgetEndedServingDays(_ record: inout GateRecord, boot: BootReading?, at now: Date) {
        record.servingDays.removeAll { day in
            guard let boot, day.process.boot == boot.id else { return true }
            return servedFor(day, boot: boot, at: now) >= Self.servingDay
        }
    }
}
