import FoundationEssentials
import MapGateBase

/// What the version gate remembers between runs (one row in each copy of the gate state).
public struct GateRecord: Sendable, Equatable {
    /// The newer store version waiting to be installed, or nil when up to date.
    public var pendingVersion: String?
    /// When the grace period started: the earlier of the first local sighting of a newer version
    /// and the store's release date of it.
    public var firstSeen: Date?
    /// Prompts shown, i.e. uses counted, since the grace period ended.
    public var promptsShown: Int = 0
    /// The latest clock reading ever seen (or the last trusted time). An earlier reading counts as
    /// this one, so setting the clock back neither restarts the grace period nor gives uses back.
    public var latestClock: Date?
    /// The last good lookup answer and when it came.
    public var lastRelease: StoreRelease?
    public var lastLookupAt: Date?
    /// The last lookup attempt, good or not, and its error when it failed.
    public var lastAttemptAt: Date?
    public var lastLookupError: String?
    /// The saved state was lost or damaged while map data was installed: the next use needs a
    /// successful lookup first, and a newer version whose grace is over has no uses left.
    public var isRecovering = false
    /// Grows by one with every saved change; of two copies the higher generation wins.
    public var generation: Int64 = 0
    /// The highest catalog serial accepted from each signing key (by key id, hex; `unsigned` for
    /// catalogs a policy lets go unsigned), with the SHA-256 of that catalog's bytes: a lower
    /// serial is a rollback, the same serial with other bytes a forgery. Kept per key, so that
    /// another publisher's catalog (or one that lost its history and signs with a new key) is not
    /// taken for a rollback of the first's.
    public var catalogSerials: [String: CatalogSerial] = [:]
    /// The gate rules of the last signed catalog accepted; they hold offline too.
    public var publisherGate: PublisherGate?
    /// The id of the key that signed them (hex): at each decision they may loosen the policy in
    /// force only if that policy lets this key set the rules (``GateSettings/gateRuleKeys``);
    /// else they only tighten it (issue 35, part 2, item 6). Nil for rules an older mapgate saved:
    /// they only tighten.
    public var publisherGateSigner: String?
    /// The regions `sync` was allowed to install under this record (sorted ids). A region file
    /// that is opened but not listed here came from somewhere else (copied in, or kept while the
    /// state was deleted): the record then recovers (fails closed until a lookup).
    public var installedRegions: [String] = []
    /// Gated uses since the last lookup attempt: a lookup is due after
    /// ``GatePolicy/maximumUsesBetweenLookups`` of them, whatever the clock says.
    public var usesSinceLookup = 0
    /// The clock's reading at the last gated use, as read (not the high-water mark): a reading
    /// that has not moved past it (a frozen clock) makes a lookup due.
    public var lastUseReading: Date?
    /// The boot (``BootReading``) during which ``latestClock`` was last set, and its boot clock
    /// then: on the same boot, the gate's time is at least ``latestClock`` plus the boot time
    /// since, whatever the wall clock says (a clock frozen or crawling with faketime).
    public var bootID: String?
    public var bootSeconds: Double?
    /// When the store first answered a version that is not newer while one was pending: the
    /// pending version is forgotten only if the store still says so a day later
    /// (``GatePolicy/withdrawalConfirmation``); a newer answer clears it.
    public var notNewerSince: Date?
    /// The prompted uses counted for runs that have not delivered them yet, with the process of
    /// each: one that died without delivering (SIGKILL, the OOM killer, a power cut) gets its use
    /// back at the next run's first look (``Gate``), as one that ends on its own does at its end.
    /// A run removes its reservation before it hands anything over, so a kill after that keeps
    /// the use.
    public var reservations: [Reservation] = []
    /// The strictest rules an unsigned managed policy has set beyond the profile's (fewer grace
    /// days or prompts, a closing day): they hold from then on, also where that policy cannot be
    /// seen (a mount namespace that hides `/etc/mapgate/policy.json`), until a *signed* policy
    /// sets the rules again (issue 35, item 6). Nil when none did.
    public var strictestRules: PublisherGate?
    /// When the record was first used (the gate's time): with map data installed and no
    /// successful lookup ever, ``GatePolicy/firstLookupDays`` count from here.
    public var firstUseAt: Date?
    /// The newer version whose sighting started the count (`firstSeen`, `promptsShown`): a user
    /// who installs it (or a later one) while a still newer one is pending starts that one's own
    /// grace (``GatePolicy/reconcile(_:at:)``). Nil in a record from before it was kept.
    public var countingFor: String?
    /// The day of serving each `serve` or `open` last paid for (its start's use, once a tile
    /// delivered it, or a day counted since), with the server's process: a server that dies before
    /// its day is over (a crash, SIGKILL, the kernel's OOM killer) leaves it to the next one started
    /// on the same boot, which serves the rest of it without a use (``GatePolicy/unfinishedServingDay(_:boot:namespace:at:isHeld:isRunning:)``).
    /// A server that stops on its own (Ctrl-C, SIGTERM) takes the day it paid with it. Kept beside
    /// the record, under a seal of their own (``GateRecordSeal/sealServingDays(_:generation:)``), so
    /// that a mapgate from before them still reads the record as sealed.
    public var servingDays: [ServingDay] = []
    /// The reservations (``Reservation/id``) of the last prompted uses delivered, newest first, at
    /// most ``recentDeliveriesKept``: the runs they paid for. An install such a run had checked,
    /// and was killed before putting in place (a SIGKILL or a power cut between the record and the
    /// rename), is finished by the next `sync` without another use,
    /// whatever uses came between (found by an attack: with the last delivery alone, a tile looked
    /// at before the next `sync` cost the killed update's use again), and is then taken out
    /// (``Gate/retireDeliveries(_:)``): it pays for one finishing. Kept beside the record under
    /// a seal of its own (``GateRecordSeal/sealDeliveries(_:generation:)``), as ``servingDays`` are.
    public var recentDeliveries: [String] = []

    /// How many delivered uses ``recentDeliveries`` keeps: more than the prompted uses of a count.
    public static let recentDeliveriesKept = 8

    public init() {}

    /// A day of serving paid for by a server's counted use.
    public struct ServingDay: Sendable, Equatable, Codable {
        /// The server serving it now (the one that paid, or the one that took it over).
        public var process: ProcessIdentity
        /// The PID namespace of that server (``PIDNamespace``), in which alone its process id
        /// tells whether it runs; nil where unknown (no server takes such a day over).
        public var namespace: UInt64?
        /// `promptsShown` right after the use that paid it: the server's own count.
        public var count: Int
        /// When that use was delivered, by the gate's time.
        public var paidAt: Date
        /// ``BootReading/seconds`` then, on the process's boot: the day ends when this clock or
        /// the gate's time has run a day since.
        public var bootSeconds: Double
        /// Whether the server serving it took it over from one that died: it leaves it, when it
        /// stops, to the next (it paid nothing for it).
        public var takenOver: Bool
        /// In system mode, the user (uid) whose session paid it: only a session of that user
        /// takes it over (the record is the machine's). Nil per user (absent from the record).
        public var owner: UInt32? = nil
    }

    /// A prompted use counted for a run that has not delivered it yet.
    public struct Reservation: Sendable, Equatable, Codable {
        /// Random, to tell this run's reservation from another's of the same process.
        public var id: String
        public var process: ProcessIdentity
    }

    /// One signing key's highest accepted serial.
    public struct CatalogSerial: Sendable, Equatable, Codable {
        public var serial: Int64
        public var sha256: String
        /// That catalog's `generated` (ISO 8601), to tell which of two keys' catalogs is the
        /// newer: serials are per key (absent in records written before it was kept).
        public var generated: String? = nil
        /// How far (seconds) the gate's clock ran ahead of the time this catalog was last judged
        /// by: set when it was taken in as newer than any accepted from its key by the clock's
        /// reading while the gate's clock ran ahead (a clock once wrong ahead, set right since).
        /// Later runs judge it by the clock's reading, but never before the gate's clock less this
        /// lead, which only shrinks (so the clock set back revives nothing, and a clock frozen
        /// within a boot does not stop it); nil when it is judged by the gate's clock.
        public var lead: Double? = nil

        /// The lead to keep when the gate's clock read `now` and the catalog was judged by `time`:
        /// none under a second (the two readings of one run).
        static func lead(of now: Date, over time: Date) -> Double? {
            let lead = now.timeIntervalSince(time)
            return lead >= 1 ? lead : nil
        }
    }

    /// Whether every counter and date is one mapgate can have written: a sealed record that
    /// fails this is treated as tampered with, never clamped into range.
    var isPlausible: Bool {
        let dates = [firstSeen, latestClock, lastLookupAt, lastAttemptAt, lastUseReading, notNewerSince, firstUseAt].compactMap { $0 }
        return (0...GateRecord.maximumCount).contains(promptsShown) && generation >= 0
            && (0...GateRecord.maximumCount).contains(usesSinceLookup) && catalogSerials.values.allSatisfy { $0.serial >= 0 && ($0.lead.map { $0.isFinite && $0 > 0 } ?? true) }
            && dates.allSatisfy { $0.timeIntervalSince1970.isFinite && $0.timeIntervalSince1970 >= 0 }
            && installedRegions.allSatisfy(Catalog.isValidRegionID)
            && (bootSeconds.map { $0.isFinite && $0 >= 0 } ?? true) && (bootID == nil) == (bootSeconds == nil)
            && reservations.count <= promptsShown
            && servingDays.count <= GateRecord.maximumServingDays
            && servingDays.allSatisfy { day in
                (0...GateRecord.maximumCount).contains(day.count) && day.bootSeconds.isFinite && day.bootSeconds >= 0
                    && day.paidAt.timeIntervalSince1970.isFinite && day.paidAt.timeIntervalSince1970 >= 0
            }
    }

    /// The largest count a record may hold (far beyond any policy's `maxPrompts`).
    static let maximumCount = 1_000_000

    /// The most servers' days a record keeps (one per running server; far beyond any real count).
    static let maximumServingDays = 1_000

    /// Adds region ids to ``installedRegions``.
    mutating func addInstalledRegions(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        installedRegions = Array(Set(installedRegions).union(ids)).sorted()
    }

    /// Forgets the pending version and the count (the app was updated or the release pulled).
    mutating func resetPending() {
        pendingVersion = nil
        firstSeen = nil
        promptsShown = 0
        notNewerSince = nil
        reservations = []
        countingFor = nil
        servingDays = []
    }

    /// True when `self` restricts the user at least as much as `other` (more uses spent, an
    /// earlier start of the grace period, recovering): of two copies of equal generation, the
    /// more restrictive one wins.
    func isMoreRestrictive(than other: GateRecord) -> Bool {
        if isRecovering != other.isRecovering { return isRecovering }
        // Summed without overflow (a serial may be as large as Int64 holds).
        func total(_ serials: [String: CatalogSerial]) -> Int64 {
            serials.values.reduce(0) { sum, saved in
                let (added, overflow) = sum.addingReportingOverflow(saved.serial)
                return overflow ? .max : added
            }
        }
        let serials = total(catalogSerials)
        let otherSerials = total(other.catalogSerials)
        if serials != otherSerials { return serials > otherSerials }
        if promptsShown != other.promptsShown { return promptsShown > other.promptsShown }
        if (pendingVersion == nil) != (other.pendingVersion == nil) { return pendingVersion != nil }
        return (firstSeen ?? .distantFuture) <= (other.firstSeen ?? .distantFuture)
    }
}
