import Foundation
import Synchronization

/// What a running server knows about the gate, shared by its workers: closed (403), failing
/// (503: the state cannot be read or written, so the server fails closed), or open.
public final class GateWatch: Sendable {
    public struct Closure: Sendable, Equatable {
        public var requiredVersion: String
        public var storeURL: String?
    }

    private let closure = Locked<Closure?>(nil)
    private let failureMessage = Locked<String?>(nil)
    private let left = Locked<Int?>(nil)
    /// Read on every request: an atomic, so an open gate costs no lock.
    private let isRefusing = Atomic<Bool>(false)

    public init() {}

    /// Non-nil once the gate is closed: every tile and TileJSON request is then refused.
    public var closed: Closure? {
        guard isRefusing.load(ordering: .acquiring) else { return nil }
        return closure.withLock { $0 }
    }

    /// Non-nil while the gate's state cannot be checked: tiles are withheld (503) until it can.
    public var failure: String? {
        guard isRefusing.load(ordering: .acquiring) else { return nil }
        return failureMessage.withLock { $0 }
    }

    /// `open`, `closed` or `failing`, for `/health` and `/metrics`.
    public var state: String {
        guard isRefusing.load(ordering: .acquiring) else { return "open" }
        return failureMessage.withLock { $0 } != nil ? "failing" : "closed"
    }

    /// Prompted uses left after the last look at the gate (nil when no update is pending).
    public var usesLeft: Int? { left.withLock { $0 } }

    /// Opens or closes the server's gate after a look at `report`.
    public func update(_ report: GateReport, isClosed: Bool) {
        left.withLock { $0 = report.requiredVersion == nil ? nil : max(0, report.maxPrompts - report.record.promptsShown) }
        closure.withLock {
            $0 = isClosed ? Closure(requiredVersion: report.requiredVersion ?? "newer", storeURL: report.storeURL) : nil
        }
        failureMessage.withLock { $0 = nil }
        isRefusing.store(isClosed, ordering: .releasing)
    }

    /// Fails closed: the state could not be read or written for longer than the refresh period.
    public func fail(_ message: String) {
        failureMessage.withLock { $0 = message }
        isRefusing.store(true, ordering: .releasing)
    }
}
