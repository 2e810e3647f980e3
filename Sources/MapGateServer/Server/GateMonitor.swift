import FoundationEssentials
import MapGateBase
import MapGateTrust

/// Keeps a running server's gate current: re-reads the saved state every `refresh` seconds
/// (another mapgate may have spent the last use), lets the gate look the store up on its
/// interval, and counts one use for each day of serving after the grace period (the rules are
/// ``GatePolicy``'s: ``GatePolicy/isServingUseDue(_:servedFor:answeredTiles:)`` and
/// ``GatePolicy/isClosedForServer(_:promptsShown:ownCount:servedFor:)``).
///
/// It looks every `refresh` seconds of real elapsed time (a ``PeriodicWorker``), and measures a
/// day of serving by the larger of the clock's and the real elapsed time: a clock set back,
/// slowed down, sped up or frozen changes neither. It fails closed: when the state cannot be read
/// or written for longer than `refresh`, tiles are answered 503 until it can, and every such
/// fault reaches `onEvent`, never a silent `catch`; when the monitor itself stops reporting, the
/// ``GateWatch``'s snapshot goes stale and the server fails closed too.
///
/// What it keeps between looks (the last counted use, the gate it opened, …) is a ``Tracker``
/// made on the monitor's own thread when it starts: not `Sendable`, so the compiler keeps it there.
public final class GateMonitor: Sendable {
    private let worker: PeriodicWorker
    private let finishedLooks = Locked(0)

    /// How many looks at the gate have finished: a test waits for two more instead of sleeping.
    public var looks: Int { finishedLooks.withLock { $0 } }

    /// What the monitor tells the command that runs the server.
    public enum Event: Sendable {
        /// A day of serving passed: one more use was counted (show the prompt).
        case counted(GateReport, usesLeft: Int)
        /// The gate closed on this server's own last use: it serves until `until`, then refuses.
        case lastDay(GateReport, until: Date)
        /// The gate is closed: tiles are answered 403.
        case closed(GateReport)
        /// The state cannot be read or written: tiles are answered 503 until it can.
        case failing(String)
        /// The state is readable again after a failure.
        case recovered
        /// The gate is open again after it was closed (another run gave back the last use it
        /// held at its question, or the store's answer changed): tiles are answered again.
        case reopened

        /// Which state it reports, for telling each change once.
        var state: String {
            switch self {
            case .counted: "counted"
            case .lastDay: "last-day"
            case .closed: "closed"
            case .failing: "failing"
            case .recovered: "recovered"
            case .reopened: "reopened"
            }
        }
    }

    /// - Parameters:
    ///   - makeGate: opens the gate on the monitor's thread (a gate owns database connections).
    ///   - start: the use of the server's start.
    ///   - servedRegions: the regions served now; one the gate's record does not list is a use.
    public init(
        watch: GateWatch, refresh: Double = 60, policy: GatePolicy, start: any ServingUse,
        makeGate: @escaping @Sendable () throws -> Gate, servedRegions: @escaping @Sendable () -> [String] = { [] },
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        let settings = Tracker.Settings(
            watch: watch, refresh: refresh, policy: policy, makeGate: makeGate, servedRegions: servedRegions, onEvent: onEvent,
            started: start.report.now, startedElapsed: MonotonicClock.seconds, start: start)
        watch.update(start.report, isClosed: Tracker(settings).isClosed(start.report), ownUse: start.ownCount != nil)
        let finished = finishedLooks
        worker = PeriodicWorker(name: "gate-monitor", interval: refresh) {
            let tracker = Tracker(settings)
            return {
                tracker.tick()
                finished.withLock { $0 += 1 }
            }
        }
    }

    /// Starts looking every `refresh` seconds. Call once, before `stop`. Throws when its thread
    /// cannot be started.
    public func start() throws {
        try worker.start()
    }

    /// Looks at the gate now rather than at the end of the interval (a use joined the server).
    public func lookNow() {
        worker.hurry()
    }

    /// Stops the monitor and waits for its thread (at most one state access in progress).
    public func stop() {
        worker.stop()
    }

    /// The monitor's memory between looks, on its thread.
    final class Tracker {
        /// What the tracker starts from.
        struct Settings: Sendable {
            var watch: GateWatch
            var refresh: Double
            var policy: GatePolicy
            var makeGate: @Sendable () throws -> Gate
            var servedRegions: @Sendable () -> [String]
            var onEvent: @Sendable (Event) -> Void
            /// When the server started, which was a use, by the clock and in ``MonotonicClock/seconds``.
            var started: Date
            var startedElapsed: Double
            /// The use of the server's start, asked for its own count at every look.
            var start: any ServingUse
        }

        private let settings: Settings
        private var watch: GateWatch { settings.watch }
        private var policy: GatePolicy { settings.policy }
        private var lastCounted: Date
        /// ``MonotonicClock/seconds`` at the last counted use.
        private var lastCountedElapsed: Double
        /// `promptsShown` right after this server's last counted use, if it counted one.
        private var ownCount: Int?
        /// ``GateWatch/tilesAnswered`` at the last look before which no use was due: a use is due
        /// only for a tile answered after the first look that finds what was paid for over (the
        /// day of the last counted use, or the grace). Looks are a minute apart: a tile in the
        /// minute the paid time ended counts as paid (found by attacks: the tile that delivered
        /// the start's use charged the next day too, and so did a tile of a paid day's last
        /// minute, or of the grace's).
        private var tilesPaidFor = 0
        /// Whether the last look found what was paid for over.
        private var wasDue = false
        private var failingSince: Double?
        private var lastState: String?
        private var gate: Gate?
        /// When the continued day the server's day runs from was paid (``ServingUse/continuedDay``).
        private var continuedPaidAt: Date?
        /// Whether the server's day has started: a use delivered or counted, or a day continued.
        private var dayStarted = false

        init(_ settings: Settings) {
            self.settings = settings
            lastCounted = settings.started
            lastCountedElapsed = settings.startedElapsed
            ownCount = settings.start.ownCount
            // The day of a dead server this one serves out runs from that one's payment.
            if let day = settings.start.continuedDay {
                lastCounted = day.paidAt
                lastCountedElapsed = settings.startedElapsed - day.served
                continuedPaidAt = day.paidAt
                dayStarted = true
            }
        }

        /// A continued day that came after the start (system mode's server: a session serving out
        /// its user's day joined) runs the day from its payment, if it was paid after the day the
        /// server runs now began (found by an attack: one paid before the server's own count of
        /// its next day moved that day back, and a use was counted an hour after the last).
        /// Not while a use is owed (a tile answered after the day ended, its count not written
        /// yet: the state was held): that use is paid first, and the day then runs from it (found
        /// looking into a CI failure: a continued day that joined while the count kept failing
        /// moved the day back to its payment, and the tiles answered past the day's end were
        /// never paid).
        private func adoptContinuedDay() {
            guard let day = settings.start.continuedDay, day.paidAt != continuedPaidAt else { return }
            guard !(wasDue && watch.tilesAnswered > tilesPaidFor) else { return }
            continuedPaidAt = day.paidAt
            guard !dayStarted || day.paidAt > lastCounted else { return }
            dayStarted = true
            lastCounted = day.paidAt
            lastCountedElapsed = MonotonicClock.seconds - day.served
        }

        /// Seconds since this server's last counted use: the larger of the clock's and the real time.
        private func servedFor(now: Date) -> TimeInterval {
            max(now.timeIntervalSince(lastCounted), MonotonicClock.seconds - lastCountedElapsed)
        }

        func isClosed(_ report: GateReport) -> Bool {
            // A session holding a use not delivered yet (system mode's server): open for the tile
            // that delivers it (a session that delivers nothing stops that tile, ``MachineSessions``).
            if settings.start.pendingCount != nil { return false }
            return policy.isClosedForServer(report.phase, promptsShown: report.record.promptsShown, ownCount: ownCount, servedFor: servedFor(now: report.now),
                isHeld: report.isHeld)
        }

        /// One look at the gate: counts a use per day of serving, else re-reads the state.
        func tick() {
            let started = MonotonicClock.seconds
            do {
                let gate = try self.gate ?? settings.makeGate()
                self.gate = gate
                var latest = try gate.status()
                // No day of serving starts before the start's use is delivered (by the first tile
                // answered): until then the day is moved to each look, then to the moment of the
                // delivery (found by an attack: a first tile more than a day after the start was
                // charged twice, for the start and for a day counted from it).
                if settings.start.continuedDay != nil {
                    // Paid before this server started: its day is fixed.
                    adoptContinuedDay()
                } else if !settings.start.hasDelivered {
                    lastCounted = latest.now
                    lastCountedElapsed = MonotonicClock.seconds
                } else if let delivered = watch.startDeliveredAt.map({ Double($0) / 1e9 }), delivered > lastCountedElapsed {
                    // From the look before it by the real time between: a clock moved after the
                    // delivery counts against the day, as it would after any counted use.
                    lastCounted = lastCounted.addingTimeInterval(delivered - lastCountedElapsed)
                    lastCountedElapsed = delivered
                    dayStarted = true
                }
                // A use that joined the server since (a session of system mode's server, once a
                // tile delivered it) is its newest own use; its day runs from its delivery (just
                // above), never from the session's start: a session that ends before any tile
                // gives its use back and moves no day (found by an attack: one started and stopped
                // before each day of serving ended restarted the day, and one use served for days).
                if let joined = settings.start.ownCount, joined > (ownCount ?? .min) {
                    ownCount = joined
                }
                var counted: Int?
                /// Counts one use of the server (opening `regions` too), as a command's run would.
                /// The day moves only once the count is written (or the gate refused it): a count
                /// that fails (another process holding the state) leaves the day due, and the next
                /// look that can write pays it (found in CI: the day had moved on before the
                /// write failed, and the server served a whole day more for nothing).
                func countUse(opening regions: [String]) throws {
                    let lookedAt = (now: latest.now, elapsed: MonotonicClock.seconds)
                    do {
                        let authorization = try gate.authorizeUse(opening: regions, payingServingDay: settings.start.keepsServingDays)
                        latest = authorization.report
                        if case .prompt(let left) = authorization.decision {
                            ownCount = latest.record.promptsShown
                            counted = left
                            dayStarted = true
                        }
                    } catch is GateClosedError {
                        latest = try gate.status()
                    }
                    lastCounted = lookedAt.now
                    lastCountedElapsed = lookedAt.elapsed
                }
                // A server whose own uses were all free (started in the grace, or before any
                // newer version) has no day paid once uses are asked: its next tile after the
                // grace is a use (found by an attack: one started in the grace and idle until it
                // ended served a day for nothing, and each such server another).
                let served = ownCount == nil ? TimeInterval.infinity : servedFor(now: latest.now)
                let tiles = watch.tilesAnswered
                let isDue = policy.isServingUseDue(latest.phase, servedFor: served)
                if !isDue || !wasDue { tilesPaidFor = tiles }
                wasDue = isDue
                let unknown = settings.servedRegions().filter { !latest.record.installedRegions.contains($0) }
                // From here until the day's use is counted, a tile to a client that has gone is
                // not answered: it would pay the day (found by an attack: a GET sent and closed at
                // once paid each day after the first, which had that check alone).
                watch.setServingUseDue(isDue)
                if !unknown.isEmpty {
                    // A region that appeared while serving without `sync` installing it under this
                    // record (a file copied in): a use of it, as `open` would be. The record recovers
                    // first (a lookup); offline that throws, and the server fails closed.
                    try countUse(opening: unknown)
                } else if policy.isServingUseDue(latest.phase, servedFor: served, answeredTiles: tiles > tilesPaidFor) {
                    try countUse(opening: [])
                    watch.setServingUseDue(false)
                } else if let refreshed = try gate.refreshIfDue() {
                    latest = refreshed
                }
                failingSince = nil
                watch.update(latest, isClosed: isClosed(latest), ownUse: ownCount != nil)
                if let counted { settings.onEvent(.counted(latest, usesLeft: counted)) }
                report(state(of: latest))
            } catch {
                // Reopen next time: the connection may be what failed.
                gate = nil
                let since = failingSince ?? started
                failingSince = since
                let elapsed = MonotonicClock.seconds - since
                if elapsed >= settings.refresh {
                    let message = errorMessage(error)
                    watch.fail(message)
                    report(.failing(message))
                }
            }
        }

        /// The event that describes where the server stands now, if worth telling.
        private func state(of report: GateReport) -> Event? {
            if let until = policy.lastServingDay(report.phase, promptsShown: report.record.promptsShown, ownCount: ownCount, lastCounted: lastCounted),
                !isClosed(report)
            {
                return .lastDay(report, until: until)
            }
            if isClosed(report) { return .closed(report) }
            if lastState == "failing" { return .recovered }
            if lastState == "closed" { return .reopened }
            return nil
        }

        /// Tells each change of state once.
        private func report(_ event: Event?) {
            guard let event else {
                lastState = nil
                return
            }
            guard event.state != lastState else { return }
            lastState = event.state == "recovered" || event.state == "reopened" ? nil : event.state
            settings.onEvent(event)
        }
    }
}
