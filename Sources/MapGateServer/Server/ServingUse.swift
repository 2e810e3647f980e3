import FoundationEssentials
import MapGateTrust

/// The use a tile server's tiles are charged to: the one use of a `serve` or `open` run
/// (``GateAuthorization``), or, for system mode's one server per machine, every session that
/// opened it (``MachineSessions``). The server asks it to ``deliver()`` before it answers a tile
/// to a GET while it is not ``isDelivered``; a failure withholds the tile (503).
public protocol ServingUse: Sendable {
    /// Whether every use concerned has been delivered: one load, asked for every tile.
    var isDelivered: Bool { get }
    /// Delivers what is not delivered yet (the gate's record is told first); throws when it cannot.
    /// True when a use was delivered by this call: only then does a day of serving start (found by
    /// an attack: a call that found nothing left to deliver, queued behind a round that had failed,
    /// moved the day as a delivery).
    @discardableResult
    func deliver() throws -> Bool
    /// The gate as it was when serving started, for the server's monitor.
    var report: GateReport { get }
    /// Whether serving started with a prompted use the monitor counts as the server's own.
    var decision: UseDecision { get }
    /// `promptsShown` right after the newest prompted use that is the server's own, if any: the
    /// use that closed the gate, if it is this, runs its day. Asked at every look of the monitor
    /// (system mode's server gains one with each session whose use a tile delivered).
    var ownCount: Int? { get }
    /// `promptsShown` right after the newest prompted use reserved for the server and not delivered
    /// yet (a session of system mode's server that has had no tile), if any: the server is open for
    /// the tile that delivers it, which then runs its day. Nil for a server of one's own (its start's
    /// use is ``isDelivered``'s).
    var pendingCount: Int? { get }
    /// Whether any use of the server has been delivered (a tile answered): until then its day of
    /// serving has not started.
    var hasDelivered: Bool { get }
    /// The day of a server that died which this one serves out without a use, if any: its day
    /// runs from that one's payment, not from a tile of this one's.
    var continuedDay: ContinuedServingDay? { get }
    /// Whether the days this server pays are kept in the record (``GateRecord/servingDays``), for
    /// a server started after it dies.
    var keepsServingDays: Bool { get }
}

extension ServingUse {
    /// The use of the server's start, when it was prompted.
    public var ownCount: Int? {
        if case .prompt = decision { return report.record.promptsShown }
        return nil
    }

    public var pendingCount: Int? { nil }

    public var hasDelivered: Bool { isDelivered }

    public var continuedDay: ContinuedServingDay? { nil }

    public var keepsServingDays: Bool { false }
}

extension GateAuthorization: ServingUse {
    /// The start's prompted use, or the day of a dead server it continues.
    public var ownCount: Int? {
        if let continuedDay { return continuedDay.count }
        if case .prompt = decision { return report.record.promptsShown }
        return nil
    }

    @discardableResult
    public func deliver() throws -> Bool {
        let before = isDelivered
        try deliver {}
        return !before
    }
}
