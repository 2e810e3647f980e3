import FoundationEssentials
import MapGateBase
import MapGateTrust
import Synchronization

/// What a running server knows about the gate, shared by its workers: open, closed (403), or
/// failing (503: the state cannot be checked, so the server fails closed).
///
/// It holds one ``Snapshot``, replaced whole by the monitor, never field by field. A snapshot is
/// good for a limited time of real elapsed time (``MonotonicClock``): when the monitor has not
/// reported within it (it is stuck, or something slowed it down), the server fails closed.
public final class GateWatch: Sendable {
    public struct Closure: Sendable, Equatable {
        public var requiredVersion: String
        public var storeURL: String?
    }

    /// Where the server's gate stands.
    public enum Standing: Sendable, Equatable {
        case open
        case closed(Closure)
        case failing(String)

        /// `open`, `closed` or `failing`, for `/health` and `/metrics`.
        public var name: String {
            switch self {
            case .open: "open"
            case .closed: "closed"
            case .failing: "failing"
            }
        }
    }

    /// One look at the gate, as every request sees it.
    public struct Snapshot: Sendable, Equatable {
        public var standing: Standing
        /// ``GateReport/usesLeft`` while an update is pending, else nil.
        public var usesLeft: Int?
        /// The newer version known, for the pages to show (nil when up to date).
        public var update: UpdateNotice? = nil
    }

    /// What the viewer pages tell the person looking at the map while a newer version is known
    /// (`/health`'s `update`): during the grace a notice, then a prompt on each page load.
    public struct UpdateNotice: Sendable, Equatable {
        /// `grace`, `prompting` or `closed`.
        public var state: String
        public var version: String
        /// The store's release notes, first lines (shown as text, never as markup).
        public var releaseNotes: [String]
        public var storeURL: String?
        /// When prompts start (the end of the grace).
        public var promptsFrom: Date?
        public var usesLeft: Int
        /// The uses left as the server's own question said them: its counted use included, while
        /// it has one (found by an attack: the viewer said one fewer than the terminal).
        public var usesLeftThisIncluded: Int

        init?(_ report: GateReport, ownUse: Bool) {
            guard let version = report.requiredVersion else { return nil }
            switch report.phase {
            case .upToDate: return nil
            case .grace: state = "grace"
            case .prompting: state = "prompting"
            case .closed: state = "closed"
            }
            self.version = version
            releaseNotes = GatePrompt.firstLines(report.record.lastRelease?.releaseNotes ?? "", count: 3, forTerminal: false)
            storeURL = report.storeURL
            promptsFrom = report.graceEnd
            usesLeft = report.usesLeft
            usesLeftThisIncluded = report.usesLeft + (ownUse ? 1 : 0)
        }
    }

    private struct Stamped {
        var snapshot: Snapshot
        /// ``MonotonicClock/nanoseconds`` after which the snapshot is stale.
        var validUntil: UInt64
    }

    private let current: Locked<Stamped>
    private let lifetime: UInt64
    private let answered = Atomic<Int>(0)

    /// Tiles the server answered (200 or 304): what delivers its uses.
    public var tilesAnswered: Int { answered.load(ordering: .acquiring) }

    /// Counts one tile answered.
    public func recordTileAnswered() {
        answered.add(1, ordering: .releasing)
    }

    private let useDue = Atomic<Bool>(false)

    /// Whether the next tile answered pays a day of serving (the monitor counts it at its next
    /// look): a tile whose client has gone is then not answered (``TileRequestHandler``), as
    /// before the start's use is delivered.
    public var isServingUseDue: Bool { useDue.load(ordering: .relaxed) }

    /// Said by the monitor at each look.
    public func setServingUseDue(_ due: Bool) {
        useDue.store(due, ordering: .relaxed)
    }

    private let startDelivery = Atomic<UInt64>(0)

    /// ``MonotonicClock/nanoseconds`` when a tile last delivered the server's start use (nil
    /// before one did): its day of serving runs from then.
    public var startDeliveredAt: UInt64? {
        let at = startDelivery.load(ordering: .acquiring)
        return at == 0 ? nil : at
    }

    /// Notes that a tile delivered the server's start use just now.
    public func recordStartDelivered() {
        startDelivery.store(max(MonotonicClock.nanoseconds, 1), ordering: .releasing)
    }

    /// - Parameter lifetime: seconds of real time a report holds; past it, without a new one, the
    ///   server fails closed.
    public init(lifetime: Double = .infinity) {
        self.lifetime = lifetime.isFinite ? UInt64(max(lifetime, 0) * 1e9) : UInt64.max / 2
        current = Locked(Stamped(snapshot: Snapshot(standing: .failing("the update gate has not been checked yet"), usesLeft: nil), validUntil: 0))
    }

    /// Seconds of real time a report holds for a monitor that looks every `refresh` seconds: two
    /// looks, plus time for a slow lookup, and never under two seconds.
    public static func lifetime(forRefresh refresh: Double) -> Double {
        max(2 * refresh + min(refresh, 30), 2)
    }

    /// The gate as a request sees it now.
    public var snapshot: Snapshot {
        let stamped = current.withLock { $0 }
        guard MonotonicClock.nanoseconds <= stamped.validUntil else {
            return Snapshot(standing: .failing("the update gate has not been checked for too long"), usesLeft: stamped.snapshot.usesLeft, update: stamped.snapshot.update)
        }
        return stamped.snapshot
    }

    /// Non-nil once the gate is closed: every tile and TileJSON request is then refused.
    public var closed: Closure? {
        if case .closed(let closure) = snapshot.standing { return closure }
        return nil
    }

    /// Non-nil while the gate's state cannot be checked: tiles are withheld (503) until it can.
    public var failure: String? {
        if case .failing(let message) = snapshot.standing { return message }
        return nil
    }

    /// `open`, `closed` or `failing`, for `/health` and `/metrics`.
    public var state: String { snapshot.standing.name }

    /// Prompted uses left after the last look at the gate (nil when no update is pending).
    public var usesLeft: Int? { snapshot.usesLeft }

    /// Opens or closes the server's gate after a look at `report`; `ownUse`: whether the server
    /// has a prompted use of its own counted (``UpdateNotice/usesLeftThisIncluded``).
    public func update(_ report: GateReport, isClosed: Bool, ownUse: Bool = false) {
        let closure = Closure(requiredVersion: report.requiredVersion ?? "newer", storeURL: report.storeURL)
        set(
            Snapshot(
                standing: isClosed ? .closed(closure) : .open, usesLeft: report.requiredVersion == nil ? nil : report.usesLeft,
                update: UpdateNotice(report, ownUse: ownUse)))
    }

    /// Fails closed: the state could not be read or written for longer than the refresh period.
    public func fail(_ message: String) {
        let (left, update) = current.withLock { ($0.snapshot.usesLeft, $0.snapshot.update) }
        set(Snapshot(standing: .failing(message), usesLeft: left, update: update))
    }

    private func set(_ snapshot: Snapshot) {
        let validUntil = MonotonicClock.nanoseconds &+ lifetime
        current.withLock { $0 = Stamped(snapshot: snapshot, validUntil: validUntil) }
    }
}
