import FoundationEssentials

/// The rest of a day of serving that a server which died without stopping had paid for, taken
/// over by a server starting now (``GatePolicy/unfinishedServingDay(_:boot:namespace:at:isHeld:isRunning:)``): the
/// new server serves it out without a use, then counts its next day as the dead one would have.
public struct ContinuedServingDay: Sendable, Equatable {
    /// The process id of the server that held it last (the one that paid it, or one that took it
    /// over before this one).
    public var pid: Int32
    /// `promptsShown` right after the use that paid it: the new server's own count.
    public var count: Int
    /// When that use was delivered, by the gate's time.
    public var paidAt: Date
    /// Seconds of it already served when it was taken over (the larger of the gate's time and
    /// the boot clock since it was paid).
    public var served: Double

    public init(pid: Int32, count: Int, paidAt: Date, served: Double) {
        self.pid = pid
        self.count = count
        self.paidAt = paidAt
        self.served = served
    }

    /// When the day ends, by the gate's time.
    public var end: Date { paidAt.addingTimeInterval(GatePolicy.servingDay) }
}
