import Foundation
import Synchronization

/// What a running server knows about the gate, shared by its workers.
public final class GateWatch: Sendable {
    public struct Closure: Sendable, Equatable {
        public var requiredVersion: String
        public var storeURL: String?
    }

    private let closure = Mutex<Closure?>(nil)
    /// Read on every request: an atomic, so open gates cost no lock.
    private let isClosed = Atomic<Bool>(false)

    public init() {}

    /// Non-nil once the gate is closed: every tile and TileJSON request is then refused.
    public var closed: Closure? {
        guard isClosed.load(ordering: .acquiring) else { return nil }
        return closure.withLock { $0 }
    }

    /// Opens or closes the server's gate after a look at `report`.
    public func update(_ report: GateReport, isClosed: Bool) {
        closure.withLock {
            $0 = isClosed ? Closure(requiredVersion: report.requiredVersion ?? "newer", storeURL: report.storeURL) : nil
        }
        self.isClosed.store(isClosed, ordering: .releasing)
    }
}

/// Keeps a running server's gate current: re-reads the saved state every `refresh` seconds
/// (another mapgate may have spent the last use), lets the gate look the store up on its
/// interval, and counts one use for each 24 hours of serving after the grace period.
///
/// Each use this server counts (its start, then one per day) lets it serve for 24 hours. When
/// the gate is closed it answers 403, unless the use that closed it is this server's own and
/// less than a day old: the fifth use runs its command, as for any other command.
public final class GateMonitor: @unchecked Sendable {
    // All mutable state is touched only on the monitor's own thread after `start`.
    private let makeGate: @Sendable () throws -> Gate
    private let watch: GateWatch
    private let refresh: Double
    private let stopping = Mutex(false)
    private let done = DispatchSemaphore(value: 0)
    private var lastCounted: Date
    /// `promptsShown` right after this server's last counted use, if it counted one.
    private var ownCount: Int?
    private let onChange: @Sendable (GateReport, UseDecision?) -> Void

    /// - Parameters:
    ///   - makeGate: opens the gate on the monitor's thread (a gate owns a database connection).
    ///   - start: the authorization of the server's start, which was a use.
    public init(
        watch: GateWatch, refresh: Double = 60, start: GateAuthorization,
        makeGate: @escaping @Sendable () throws -> Gate, onChange: @escaping @Sendable (GateReport, UseDecision?) -> Void = { _, _ in }
    ) {
        self.watch = watch
        self.refresh = refresh
        self.makeGate = makeGate
        lastCounted = start.report.now
        if case .prompt = start.decision { ownCount = start.report.record.promptsShown }
        self.onChange = onChange
        watch.update(start.report, isClosed: isClosed(start.report))
    }

    /// Closed for this server: the gate is closed, and not by this server's own use of today.
    private func isClosed(_ report: GateReport) -> Bool {
        guard report.phase.isClosed else { return false }
        let ownUseStillRunning = ownCount == report.record.promptsShown && report.now.timeIntervalSince(lastCounted) < 86_400
        return !ownUseStillRunning
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "gate-monitor"
        thread.start()
    }

    public func stop() {
        let wasRunning = stopping.withLock { value in
            defer { value = true }
            return !value
        }
        if wasRunning { done.wait() }
    }

    private func run() {
        defer { done.signal() }
        let gate = try? makeGate()
        while true {
            let deadline = Date().addingTimeInterval(refresh)
            while Date() < deadline {
                if stopping.withLock({ $0 }) { return }
                Thread.sleep(forTimeInterval: min(0.05, refresh))
            }
            guard let gate else { continue }
            tick(gate)
        }
    }

    /// One look at the gate: counts a use per 24 h of serving, else just re-reads the state.
    func tick(_ gate: Gate) {
        do {
            let report = try gate.status()
            var decision: UseDecision?
            var latest = report
            if case .prompting = report.phase, report.now.timeIntervalSince(lastCounted) >= 86_400 {
                lastCounted = report.now
                do {
                    let authorization = try gate.authorizeUse()
                    decision = authorization.decision
                    latest = authorization.report
                    if case .prompt = authorization.decision { ownCount = latest.record.promptsShown }
                } catch is GateClosedError {
                    latest = try gate.status()
                }
            } else if let refreshed = try? gate.refreshIfDue() {
                latest = refreshed
            }
            let wasClosed = watch.closed != nil
            watch.update(latest, isClosed: isClosed(latest))
            if decision != nil || wasClosed != (watch.closed != nil) { onChange(latest, decision) }
        } catch {
            // A state that cannot be read leaves the last decision in place.
        }
    }
}
