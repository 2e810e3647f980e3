import FoundationEssentials
import MapGateBase

/// The version gate: looks the store up, keeps its record in the ``GateStore``, and decides each
/// use. Confined to one thread (it owns database connections).
public final class Gate {
    public let policy: GatePolicy
    private let settings: GateSettings
    private let store: GateStore
    private let clock: Clock
    private let lookup: StoreLookup
    private let checkInterval: TimeInterval
    /// Running in a user namespace of the user's own (``UserNamespace``): store answers may only
    /// make the gate stricter.
    private let isConfined: Bool
    /// Key ids (hex) whose catalogs' `gate` rules may loosen the gate; nil: any trusted key's.
    /// The keys whose catalogs' `gate` rules may loosen the policy in force (hex ids).
    private let gateRuleKeyIDs: Set<String>
    /// In system mode, the user (uid) a session command of the service runs for: the days its
    /// sessions pay are that user's (``GateRecord/ServingDay/owner``). Nil per user.
    public var servingDayOwner: UInt32?

    /// - Parameters:
    ///   - installed: the app's version; ``BuildInfo/version`` everywhere but in the tests and the
    ///     demo's "after the update" step. Package access: no user can reach it.
    ///   - isConfined: whether this process runs outside the machine's own user namespace (the
    ///     kernel's answer by default; tests set it).
    package init(
        store: GateStore, settings: GateSettings, clock: Clock, installed: AppVersion, lookup: StoreLookup? = nil,
        isConfined: Bool = !UserNamespace.isInitial
    ) {
        self.isConfined = isConfined
        self.settings = settings
        gateRuleKeyIDs = Set((settings.gateRuleKeys ?? settings.trustedKeys).compactMap { try? MinisignPublicKey(text: $0).keyID.hex })
        policy = GatePolicy(installed: installed, settings: settings)
        self.store = store
        self.clock = clock
        checkInterval = min(settings.checkIntervalHours, GateSettings.maximumCheckIntervalHours) * 3600
        self.lookup = lookup ?? StoreLookup(settings: settings)
    }

    /// The gate of the installed app (``BuildInfo/version``) under the publisher's `settings`.
    public convenience init(store: GateStore, settings: GateSettings, clock: Clock = .system) throws {
        // The compiled-in version is valid by construction; a typo there fails every test.
        self.init(store: store, settings: settings, clock: clock, installed: try AppVersion(BuildInfo.version))
    }

    /// What the last look at the saved copies found wrong with them (for a warning).
    public var stateNotes: [String] { store.notes }

    /// Looks the store up now (`mapgate check`). A failed lookup is in the report's
    /// `lookupError`; the saved state still decides.
    public func check() throws -> GateReport {
        // The user asked for this lookup: give the network more time than an ordinary run does.
        var patient = lookup
        patient.connectTimeout = 10
        return try refresh(using: patient)
    }

    /// The gate from the saved state, without the network (`mapgate status`).
    public func status() throws -> GateReport {
        try update { record, now, policy in report(record, now: now, policy: policy, error: nil) }
    }

    /// Decides one use (sync, open, serve, tile): looks up when due, counts the use when it
    /// prompts, and throws ``GateClosedError`` when the gate is closed (or
    /// ``GateRecoveryError`` when lost state needs a lookup that failed).
    ///
    /// - Parameters:
    ///   - opening: the installed regions this use reads. One that `sync` did not install under
    ///     this record (a file copied in, or kept while the state was deleted) makes the record
    ///     recover: a lookup must succeed first, then it is taken in.
    ///   - installing: the regions this use may install (`sync`); they are taken in.
    ///   - payingServingDay: a day of a running server of one's own (its monitor's count): the day
    ///     it pays is kept in the record (``GateRecord/servingDays``), for a server started after
    ///     this one dies.
    public func authorizeUse(opening: [String] = [], installing: [String] = [], payingServingDay: Bool = false) throws -> GateAuthorization {
        try reserveUse(
            opening: opening, installing: installing, lookupError: try prepareUse(opening: opening), keepsReservation: false,
            server: payingServingDay ? .day : nil)
    }

    /// Which use of a server of one's own it is, whose paid days the record keeps.
    private enum ServerUseKind {
        /// Its start: it may serve out the day of a server that died (``GatePolicy/unfinishedServingDay(_:boot:namespace:at:isHeld:isRunning:)``),
        /// and the use its first tile delivers pays its first day.
        case start
        /// A day counted while it serves: paid at once.
        case day
    }

    /// The first half of ``authorizeUse(opening:installing:payingServingDay:)``: notes regions from elsewhere
    /// (recovery) and looks the store up when one is due. Returns the lookup's error, if any.
    private func prepareUse(opening: [String]) throws -> LookupError? {
        let reading = clock.now
        let due = try update { record, now, policy -> Bool in
            let unknown = opening.filter { !record.installedRegions.contains($0) }
            if !unknown.isEmpty, !record.isRecovering {
                record.isRecovering = true
                store.note(
                    "region \(unknown.joined(separator: ", ")) was not installed by 'mapgate sync' under this gate state: mapgate needs one successful store lookup before the next use")
            }
            let due = policy.isLookupDue(record, reading: reading, now: now, interval: checkInterval)
            record.lastUseReading = reading
            return due
        }
        return due ? try refresh(using: lookup).lookupError : nil
    }

    /// The second half: decides the use and reserves it, in one transaction.
    ///
    /// - Parameter keepsReservation: whether the record keeps a prompted use's reservation with
    ///   this process (``GateRecord/reservations``) until the authorization confirms its delivery,
    ///   so that a later run gives it back if this one dies first. Only for uses that are settled
    ///   (``use(opening:installing:serving:paidBy:reserving:confirm:_:)``).
    ///
    /// - Parameter earlier: a delivered use (``GateRecord/recentDeliveries``) that already paid for
    ///   what this one installs (``use(opening:installing:serving:paidBy:reserving:confirm:_:)``):
    ///   while the record lists it and the gate is open, this use counts nothing.
    private func reserveUse(
        opening: [String], installing: [String], lookupError: LookupError?, keepsReservation: Bool, server: ServerUseKind? = nil, paidBy earlier: String? = nil
    ) throws -> GateAuthorization {
        // Only where the store can be opened again on the delivering thread and /proc tells this process.
        let reservation = keepsReservation && store.reopen != nil ? ProcessIdentity.current.map { GateRecord.Reservation(id: Self.reservationID(), process: $0) } : nil
        let boot = clock.boot
        let owner = servingDayOwner
        let (decision, useReport, recovering, continued, paidBy) = try update {
            record, now, policy -> (UseDecision, GateReport, GateRecoveryError.Reason?, ContinuedServingDay?, String?) in
            if record.isRecovering { return (.refused, report(record, now: now, policy: policy, error: lookupError), .lostState, nil, nil) }
            if policy.needsFirstLookup(record, at: now), let days = policy.firstLookupDays {
                return (.refused, report(record, now: now, policy: policy, error: lookupError), .neverReached(days: days), nil, nil)
            }
            // A server starting after one that died (a crash, SIGKILL, the OOM killer) serves out
            // the day the dead one paid for, counting nothing: a fault is not the user's use. It
            // takes the day over, so that no other server can.
            let others = record.reservations.filter { $0.process != ProcessIdentity.current }.count
            // Not from a user namespace of one's own: there `/proc` can be made to say a running
            // server ended (a time namespace shifts every start time, a mount over `/proc/PID`
            // hides it) and the boot clock and id can be set (found by an attack: a server there
            // took over the day of one running outside). Nor are days kept for servers there.
            if server == .start, !self.isConfined, let process = ProcessIdentity.current, let boot,
                let index = policy.unfinishedServingDay(
                    record, boot: boot, namespace: PIDNamespace.current, owner: owner, at: now, isHeld: policy.isClosedByHeldUses(record, held: others, at: now),
                    isRunning: { $0.isRunning })
            {
                let day = record.servingDays[index]
                record.servingDays[index].process = process
                record.servingDays[index].takenOver = true
                record.addInstalledRegions(opening + installing)
                let continued = ContinuedServingDay(pid: day.process.pid, count: day.count, paidAt: day.paidAt, served: policy.servedFor(day, boot: boot, at: now))
                return (.allowed, report(record, now: now, policy: policy, error: lookupError), nil, continued, nil)
            }
            // Paid already by a run's delivered use that did not install all it paid for (a
            // network fault, a signal): counted nothing, unless the gate has closed since. That
            // use is this run's from now, under a new name: no other run may be let in on it
            // (found by an attack: a copy of its record in another data directory, run while this
            // one downloaded, was let in too).
            if let earlier, let index = record.recentDeliveries.firstIndex(of: earlier) {
                var probe = record
                if policy.use(&probe, at: now) != .refused {
                    let renewed = Self.reservationID()
                    record.recentDeliveries[index] = renewed
                    record.addInstalledRegions(opening + installing)
                    return (.allowed, report(record, now: now, policy: policy, error: lookupError), nil, nil, renewed)
                }
            }
            let decision = policy.use(&record, at: now)
            if decision != .refused { record.addInstalledRegions(opening + installing) }
            if case .prompt = decision, let reservation { record.reservations.append(reservation) }
            if server == .day, !self.isConfined, case .prompt = decision, let process = ProcessIdentity.current, let boot {
                policy.recordServingDay(&record, process: process, namespace: PIDNamespace.current, owner: owner, count: record.promptsShown, at: now, boot: boot)
            }
            return (decision, report(record, now: now, policy: policy, error: lookupError), nil, nil, nil)
        }
        if let recovering { throw GateRecoveryError(lookupError: lookupError, reason: recovering) }
        if decision == .refused { throw useReport.isHeld ? heldError(useReport) : closedError(useReport) }
        let keepsDays = server != nil
        guard case .prompt = decision, let reservation, let reopen = store.reopen else {
            return GateAuthorization(decision: decision, report: useReport, continuedDay: continued, keepsServingDays: keepsDays, paidByEarlier: paidBy)
        }
        let (settings, clock, installed, isConfined) = (settings, clock, policy.installed, isConfined)
        // A server's start pays its first day when its first tile delivers the use.
        let paidCount = server == .start ? useReport.record.promptsShown : nil
        return GateAuthorization(decision: decision, report: useReport, reservationID: reservation.id, keepsServingDays: keepsDays) { deadline in
            let gate = Gate(store: try reopen(), settings: settings, clock: clock, installed: installed, isConfined: isConfined)
            gate.servingDayOwner = owner
            try gate.confirmDelivery(of: reservation.id, before: deadline, servingDayCount: paidCount)
        }
    }

    /// 64 random bits, hex.
    private static func reservationID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }

    /// Says in the record that the reserved use `id` is being delivered: it is kept from now on,
    /// whatever happens to this process. A reservation another run gave back in the meantime (it
    /// took this process for ended: a process in a PID namespace of its own looks so from
    /// outside) is counted again; if the gate has closed since, nothing may be delivered
    /// (``GateUseWithdrawnError``). Saved before `deadline` or not at all (``GateStore/update(before:_:)``).
    ///
    /// - Parameter servingDayCount: for a server's start, `promptsShown` right after its use: the
    ///   day it pays from now is kept in the record (``GateRecord/servingDays``).
    func confirmDelivery(of id: String, before deadline: Double? = nil, servingDayCount count: Int? = nil) throws {
        let boot = clock.boot
        try update(before: deadline) { record, now, policy in
            var paid = count
            if let index = record.reservations.firstIndex(where: { $0.id == id }) {
                record.reservations.remove(at: index)
            } else {
                let decision = policy.use(&record, at: now)
                if decision == .refused { throw GateUseWithdrawnError() }
                if case .prompt = decision { paid = paid.map { _ in record.promptsShown } } else { paid = nil }
            }
            // The run this use paid for, in the same commit: an install it had checked and not yet
            // put in place when it was killed is finished by the next `sync` without another use.
            record.recentDeliveries = Array(([id] + record.recentDeliveries.filter { $0 != id }).prefix(GateRecord.recentDeliveriesKept))
            if let paid, !isConfined, let process = ProcessIdentity.current, let boot {
                policy.recordServingDay(&record, process: process, namespace: PIDNamespace.current, owner: servingDayOwner, count: paid, at: now, boot: boot)
            }
        }
    }

    /// Takes `ids` out of the last delivered uses (``GateRecord/recentDeliveries``): the installs
    /// they paid for are finished (or given up), and they pay for no other. Counts nothing.
    /// Returns the last delivered uses as they were, read in the same transaction.
    @discardableResult
    public func retireDeliveries(_ ids: Set<String>) throws -> [String] {
        try update { record, _, _ in
            defer { record.recentDeliveries.removeAll { ids.contains($0) } }
            return record.recentDeliveries
        }
    }

    /// Renews the delivered use `id` (``GateRecord/recentDeliveries``) under a new name, in its
    /// place, and returns the name; nil when the record no longer lists it. Counts nothing. For
    /// the regions a `sync` run paid for and did not install, which the next run takes over: a
    /// copy of what named the old name pays for nothing after.
    public func renewDelivery(_ id: String) throws -> String? {
        try update { record, _, _ in
            guard let index = record.recentDeliveries.firstIndex(of: id) else { return nil }
            let renewed = Self.reservationID()
            record.recentDeliveries[index] = renewed
            return renewed
        }
    }

    /// One use of map data, counted only when delivered: authorizes it (``authorizeUse(opening:installing:payingServingDay:)``:
    /// looks up when due, reserves the use, throws when closed), asks `confirm` (the prompt: false
    /// when the user chose to update now, and nothing runs; an error when the user gave no answer,
    /// and nothing runs either), runs `work`, then settles: a use that `work` did not deliver
    /// (``GateAuthorization/deliver(_:)``) is given back, whether `work` returned or threw.
    /// Returns nil when `confirm` said no.
    ///
    /// - Parameter reserving: runs the one transaction that reserves the use (its argument) and
    ///   returns what it returns. A caller whose signal handler gives the use back holds its lock
    ///   around it, so that no signal falls between the reservation and the caller knowing of it.
    public func use<Result>(
        opening: [String] = [], installing: [String] = [], serving: Bool = false, paidBy earlier: String? = nil,
        reserving: (() throws -> GateAuthorization) throws -> GateAuthorization = { try $0() },
        confirm: (GateAuthorization) throws -> Bool = { _ in true },
        _ work: (GateAuthorization) throws -> Result
    ) throws -> Result? {
        let lookupError = try prepareUse(opening: opening)
        let authorization = try reserving {
            try reserveUse(
                opening: opening, installing: installing, lookupError: lookupError, keepsReservation: true, server: serving ? .start : nil, paidBy: earlier)
        }
        // A server that ends here stopped on its own (Ctrl-C, SIGTERM, an error): its day goes
        // with it; only one that dies, or whose terminal hung up, leaves it to the next.
        defer { if serving, !authorization.leavesServingDay { endServing() } }
        let result: Result?
        do {
            result = try confirm(authorization) ? try work(authorization) : nil
        } catch {
            settleNoting(authorization)
            throw error
        }
        settleNoting(authorization)
        return result
    }

    /// Forgets the day this process's server paid for (``GateRecord/servingDays``), as it stops
    /// on its own. A day it took over from a server that died stays for the next server: it paid
    /// nothing for it (found by a review: a day taken over by an `open` stopped with Ctrl-C was
    /// lost to the service restarted after it). One that cannot be forgotten now (the state
    /// busy) is left to the next server started within it: what was paid for, never more.
    private func endServing() {
        guard let process = ProcessIdentity.current else { return }
        // In system mode a day taken over goes too: a session ended by its user's choice, its
        // user's next session pays (as every session does), as it would have without the crash.
        let owned = servingDayOwner != nil
        _ = try? update { record, _, _ in record.servingDays.removeAll { $0.process == process && (!$0.takenOver || owned) } }
    }

    /// Keeps the use `authorization` reserved if it was delivered, else gives it back (once);
    /// either way nothing is delivered through it afterwards (a use the gate did not count is
    /// withdrawn, with nothing to write). Returns whether a use was given back. A use that cannot be given back (the state cannot
    /// be written) stays counted: the gate fails closed.
    @discardableResult
    public func settle(_ authorization: GateAuthorization) throws -> Bool {
        // Taken for an uncounted use too, so that nothing is delivered after it: "delivered" and
        // "withdrawn" stay one decision (found by a run under load: Ctrl-C as a region whose use
        // the gate did not count went into place ended the run while the region was being
        // recorded, installed and never said).
        guard authorization.beginGivingBack() else { return false }
        defer { authorization.endGivingBack() }
        guard authorization.countedPrompt else { return false }
        let givenBack = try update { record, _, policy in
            // A reservation the record no longer holds was given back already (by a run that
            // took this one for ended); one whose delivery the record was told of is counted.
            if let id = authorization.reservationID, !authorization.isConfirmed {
                guard let index = record.reservations.firstIndex(where: { $0.id == id }) else { return false }
                record.reservations.remove(at: index)
            }
            // A use told delivered whose step then failed (the rename into place) paid for
            // nothing: no install of its may be finished as paid (found by an attack: its pending
            // record, copied during the delivery, was finished by the next sync, and the region
            // installed without a use).
            if let id = authorization.reservationID { record.recentDeliveries.removeAll { $0 == id } }
            return policy.giveBack(&record)
        }
        if givenBack { authorization.markGivenBack() }
        return givenBack
    }

    /// ``settle(_:)`` for the end of a run: a failure to give the use back is told through
    /// ``stateNotes``, not thrown over the run's own outcome.
    private func settleNoting(_ authorization: GateAuthorization) {
        do {
            try settle(authorization)
        } catch {
            store.note(L.localized("the use this run reserved could not be given back now (%1$s); the next mapgate run gives it back", "\(errorMessage(error))"))
        }
    }

    /// Refuses (``GateClosedError``) when the gate is closed now, counting nothing; looks the
    /// store up first when a lookup is due. `sync` asks this before it checks packages on the network.
    /// Returns the gate as it found it.
    @discardableResult
    public func refuseIfClosed() throws -> GateReport {
        let report = try refreshIfDue() ?? status()
        if report.isHeld { throw heldError(report) }
        if report.phase.isClosed { throw closedError(report) }
        return report
    }

    /// Looks the store up if an ordinary run would now (on the check interval), without
    /// counting a use; nil when no lookup was due. A running server calls this.
    public func refreshIfDue() throws -> GateReport? {
        guard try isLookupDue() else { return nil }
        return try refresh(using: lookup)
    }

    /// The error a closed gate refuses with, for `report`.
    public func closedError(_ report: GateReport) -> GateClosedError {
        GateClosedError(
            installedVersion: policy.installed.text, requiredVersion: report.requiredVersion ?? "newer",
            storeURL: report.storeURL)
    }

    /// The error of a gate closed only by uses other runs hold (``GateReport/isHeld``), for `report`.
    public func heldError(_ report: GateReport) -> GateUseHeldError {
        GateUseHeldError(processes: report.record.reservations.map(\.process.pid))
    }

    private func isLookupDue() throws -> Bool {
        let reading = clock.now
        return try update { record, now, policy in
            policy.isLookupDue(record, reading: reading, now: now, interval: checkInterval)
        }
    }

    private func refresh(using lookup: StoreLookup) throws -> GateReport {
        // The network call runs outside any transaction so no lock is held while waiting.
        let result = Result { try lookup.fetch() }
        // A library that cannot be loaded is this machine's fault, not "offline": the run fails
        // (exit 69, naming the package) and nothing is recorded.
        if case .failure(let error as SharedLibraryError) = result { throw error }
        return try update { record, now, policy in
            switch result {
            case .success(let answer):
                let decided = try policy.record(answer.release, trustedTime: answer.trustedTime, at: now, into: &record, tightenOnly: isConfined)
                let confinement = isConfined && record.isRecovering ? LookupError.network(GatePolicy.confinedRecovery) : nil
                return report(record, now: decided, policy: policy, error: confinement)
            case .failure(let error):
                let failure = error as? LookupError ?? .network(errorMessage(error))
                // Kept in English: `status --json` reads it back, and JSON is never translated.
                policy.recordFailure(Localization.inEnglish { errorMessage(failure) }, at: now, into: &record)
                return report(record, now: now, policy: policy, error: failure)
            }
        }
    }

    /// Takes in a catalog as its source fetched and verified it (``accept(_:sha256:signedBy:)``)
    /// and returns the proof that it did, which ``SyncWorkflow`` requires.
    public func accept(_ fetched: CatalogSource.Fetched) throws -> AcceptedCatalog {
        let newer = try accept(fetched.catalog, sha256: fetched.sha256, signedBy: fetched.signature?.keyID.hex)
        return AcceptedCatalog(fetched, newerAccepted: newer)
    }

    /// Takes in a catalog whose signature was verified (or that the policy lets go unsigned):
    /// refuses a rollback (a lower serial than already accepted from the same signing key), the
    /// same serial with other bytes, a signed catalog without `expires`, and a catalog past its
    /// `expires` by the gate's clock (trusted time when online, never earlier than the latest time seen). A signed catalog's `gate` rules
    /// are saved with the state, so they hold from the next decision on, offline too.
    ///
    /// - Parameter signedBy: the id of the key that signed it (hex), or nil when unsigned.
    /// - Returns: the newest catalog of another key accepted before, when it was published later
    ///   than this one (``AcceptedCatalog/newerAccepted``).
    @discardableResult
    public func accept(_ catalog: Catalog, sha256: String, signedBy keyID: String?) throws -> AcceptedCatalog.NewerCatalog? {
        // A refusal is returned, not thrown, inside the transaction: the clock's high-water mark
        // it moved is saved either way.
        var newer: AcceptedCatalog.NewerCatalog?
        let reading = clock.now
        let refusal = try update { record, now, _ -> CatalogError? in
            // The time the catalog's `expires` was judged by (kept when it was behind the gate's clock).
            var judgedBy: Date?
            func refuse(_ reason: String) -> CatalogError { CatalogError(source: catalog.sourceURL, region: nil, reason: reason) }
            // A signed catalog that never expires could be replayed forever (a frozen client never
            // sees the publisher's later rules, a raised minimumAppVersion among them); found by
            // an attack. An unsigned one (a policy that allows it) has no such promise to keep.
            if keyID != nil, catalog.expires == nil {
                return refuse(L.localized("a signed catalog must say when it expires (\"expires\"): without it an old copy could be replayed forever"))
            }
            let signer = keyID ?? "unsigned"
            // A rollback is said as one before the catalog's age is judged (found by an attack: an
            // older stick read as "expired", with words about the clock, not as an older catalog).
            if let saved = record.catalogSerials[signer] {
                let serial = catalog.serial ?? -1
                if serial < saved.serial {
                    let shown = catalog.serial.map(String.init) ?? L.localized("none")
                    let said =
                        keyID.map { L.localized("serial %1$s is lower than %2$s, already accepted from key %3$s: refusing a rollback", shown, "\(saved.serial)", $0) }
                        ?? L.localized("serial %1$s is lower than %2$s, already accepted unsigned: refusing a rollback", shown, "\(saved.serial)")
                    return refuse(
                        said
                            + L.localized(
                                "; this catalog is older than the one this machine has (an old mirror, or a stale cache): sync from the publisher or from a mirror written since"))
                }
                if serial == saved.serial, saved.sha256 != sha256 {
                    return refuse(
                        L.localized(
                            "serial %1$s was accepted with other contents (SHA-256 %2$s…, now %3$s…): the publisher must raise the serial", "\(serial)",
                            String(saved.sha256.prefix(12)), String(sha256.prefix(12))))
                }
            }
            if let expires = catalog.expires {
                // The gate's clock never goes back, so setting the clock back does not revive a
                // catalog already accepted once it is stale. A catalog newer than any accepted from
                // its key is judged by the clock as it reads, though never before the newest
                // catalog accepted was published: a clock that was once wrong ahead (a dead
                // battery, set right since) left every later catalog "expired" by a time that
                // never came, for good on a machine that gets its maps from sticks and never
                // reaches the store (found by an attack).
                let saved = record.catalogSerials[signer]
                let isNewer = (catalog.serial ?? -1) > (saved?.serial ?? -1)
                let published = ([catalog.generated] + record.catalogSerials.values.map { $0.generated.flatMap(ISODate.parse) }).compactMap { $0 }
                // The same catalog taken in so before goes on being judged by the clock's reading,
                // never before the gate's clock less the lead it had then, which only shrinks: the
                // clock set back revives nothing, and the relief ends when the gate's clock is no
                // longer ahead (found by reading the change again: a second run refused what the
                // first had installed from).
                let lead = saved.flatMap { $0.serial == catalog.serial && $0.sha256 == sha256 ? $0.lead : nil }
                let time = isNewer ? ([reading] + published).max() ?? reading : lead.map { min(now, max(reading, now.addingTimeInterval(-$0))) } ?? now
                judgedBy = time
                // Kept at once, so that a refusal below keeps it too.
                if lead != nil { record.catalogSerials[signer]?.lead = GateRecord.CatalogSerial.lead(of: now, over: time) }
                if time >= expires {
                    let said = L.localized("expired on %1$s (the time is %2$s): refusing a stale catalog", LocalTime.text(expires), LocalTime.text(time))
                    // What to do (found by an attack: a stick's user read "refusing a stale catalog"
                    // and no way on).
                    let advice = L.localized("; a newer catalog is needed: the publisher's next one, or a mirror written since")
                    guard time > reading.addingTimeInterval(86_400) else { return refuse(said + advice) }
                    // A newer catalog is judged by the clock, never before the newest catalog
                    // accepted was published: that is the time said, not the gate's clock.
                    if isNewer {
                        return refuse(
                            said
                                + L.localized(
                                    "; the clock reads %1$s, but a catalog accepted before was published at %2$s: a catalog the publisher made later is accepted",
                                    LocalTime.text(reading), LocalTime.text(time)))
                    }
                    return refuse(
                        said
                            + L.localized(
                                "; the clock reads %1$s, and mapgate's time never goes back past the latest it saw: a catalog the publisher made later is accepted",
                                LocalTime.text(reading)))
                }
            }
            // Which key's catalog is newer is told by when each was published: serials are per
            // key, and a new key may start a new count (docs/publishing.md).
            if keyID != nil, let generated = catalog.generated {
                for (other, accepted) in record.catalogSerials where other != signer && other != "unsigned" {
                    guard let theirs = accepted.generated.flatMap(ISODate.parse), theirs > generated, theirs > newer?.generated ?? generated else { continue }
                    newer = AcceptedCatalog.NewerCatalog(keyID: other, serial: accepted.serial, generated: theirs)
                }
            }
            if let serial = catalog.serial {
                record.catalogSerials[signer] = GateRecord.CatalogSerial(
                    serial: serial, sha256: sha256, generated: catalog.generated.map(ISODate.string),
                    lead: judgedBy.flatMap { GateRecord.CatalogSerial.lead(of: now, over: $0) })
            }
            // A catalog published before one already accepted from another key (an older one of
            // a publisher rotating keys, kept or on a stick) changes no rules: its rules are the
            // newer catalog's to set (found by an attack: an older catalog's stricter rules, added
            // to those in force, closed the gate on a stick the run said "changes nothing").
            if let keyID, newer == nil {
                // A key the profile (or a signed policy) trusts sets the rules, unless the rules in
                // force came from another of them in a catalog of a higher serial: serials are per
                // key, so an older catalog of a publisher's other key (kept, or on a stick, while
                // it rotates keys) would put its older rules back and reopen a closed gate.
                let rulesSigner = record.publisherGateSigner
                var supersedes = true
                if let rulesSigner, rulesSigner != keyID, gateRuleKeyIDs.contains(rulesSigner),
                    let rulesSerial = record.catalogSerials[rulesSigner]?.serial
                {
                    supersedes = (catalog.serial ?? -1) >= rulesSerial
                }
                if gateRuleKeyIDs.contains(keyID), supersedes {
                    record.publisherGate = catalog.gate
                    record.publisherGateSigner = keyID
                } else if let gate = catalog.gate {
                    // Otherwise its rules are only added to those in force, each the stricter (for
                    // a key only an unsigned policy trusts, no looser than that policy either); a
                    // catalog without rules leaves them as they are.
                    let added = gateRuleKeyIDs.contains(keyID) ? gate : self.policy.tightening(gate)
                    record.publisherGate = record.publisherGate.map { $0.stricter(with: added) } ?? added
                    if rulesSigner == nil { record.publisherGateSigner = keyID }
                }
            }
            return nil
        }
        if let refusal { throw refusal }
        return newer
    }

    /// Runs `body` on the saved record in one write transaction (on every copy), after moving
    /// the clock's high-water mark and reconciling with the installed version, then saves it.
    /// `body` gets the rules in force: the settings' with the saved publisher rules applied.
    private func update<T>(before deadline: Double? = nil, _ body: (inout GateRecord, Date, GatePolicy) throws -> T) throws -> T {
        let reading = clock.now
        let boot = clock.boot
        return try store.update(before: deadline) { record in
            // An unsigned policy's tightening is kept, so that hiding the policy (a mount
            // namespace of one's own) does not undo it; only a signed policy sets the rules anew.
            record.strictestRules = settings.managedPolicySigned ? nil : self.policy.strictestRules(keeping: record.strictestRules)
            let managed = record.strictestRules.map { self.policy.tightened(by: $0) } ?? self.policy
            // Saved rules loosen only a policy that lets their signer set the rules: under another
            // policy (an administrator's stricter one, outside the namespace they were taken in)
            // they only tighten it.
            let saved = record.publisherGate.map { gate in
                record.publisherGateSigner.map(gateRuleKeyIDs.contains) == true ? gate : managed.tightening(gate)
            }
            let policy = managed.applying(saved)
            let now = policy.advanceClock(&record, reading: reading, boot: boot)
            if record.firstUseAt == nil { record.firstUseAt = now }
            policy.reconcile(&record, at: now)
            // Uses reserved by runs that died before delivering (SIGKILL, the OOM killer, a power
            // cut: no fault of the user's) go back, as the end of a run gives its own back; so do
            // those of runs stopped (Ctrl-Z at the question: found by an attack, a stopped run
            // held the machine's last use from every user for as long as it stayed stopped). One
            // continued later counts its use again when it delivers, or is refused if the gate
            // closed meanwhile (``confirmDelivery(of:)``); its end gives nothing back twice.
            for ended in record.reservations where !ended.process.isRunning || ended.process.isStopped {
                record.reservations.removeAll { $0.id == ended.id }
                _ = policy.giveBack(&record)
            }
            policy.forgetEndedServingDays(&record, boot: boot, at: now)
            return try body(&record, now, policy)
        }
    }

    private func report(_ record: GateRecord, now: Date, policy: GatePolicy, error: LookupError?) -> GateReport {
        GateReport(
            installedVersion: policy.installed.text, record: record, phase: policy.phase(of: record, at: now),
            graceEnd: record.pendingVersion == nil ? nil : policy.graceEnd(of: record),
            maxPrompts: policy.maxPrompts, now: now, lookupError: error,
            minimumAppVersion: policy.isBelowMinimum ? policy.minimumAppVersion?.text : nil,
            isHeld: policy.isClosedByHeldUses(record, held: record.reservations.filter { $0.process != ProcessIdentity.current }.count, at: now))
    }
}
