import FoundationEssentials
import MapGateBase

/// Everything `check` and `status` show about the gate.
public struct GateReport: Sendable, Equatable {
    public var installedVersion: String
    public var record: GateRecord
    public var phase: GatePhase
    /// When the prompts start (or started), if a newer version is pending.
    public var graceEnd: Date?
    /// Prompted uses allowed after the grace period (`maxPrompts`).
    public var maxPrompts: Int
    /// The time the decision was made at (never earlier than any time seen before).
    public var now: Date
    /// This run's lookup error, when it looked up and failed.
    public var lookupError: LookupError?
    /// The publisher's minimum version, when the installed app is below it (a critical update).
    public var minimumAppVersion: String?
    /// Closed only by prompted uses other runs hold undelivered (``GatePolicy/isClosedByHeldUses(_:held:at:)``):
    /// the gate opens again if they are given back.
    public var isHeld = false

    /// Prompted uses left: none once the gate is closed (by count, `closeAfterDays` or the
    /// publisher's `minimumAppVersion`), the count while prompting, and before the grace period
    /// ends those not yet spent. The one rule that `status`, `/health` and `/metrics` show.
    public var usesLeft: Int {
        switch phase {
        case .prompting(let left): left
        case .closed: 0
        case .upToDate, .grace: max(0, maxPrompts - record.promptsShown)
        }
    }

    /// The version to install, if any.
    public var requiredVersion: String? { record.pendingVersion ?? minimumAppVersion }
    public var storeURL: String? { record.lastRelease?.storeURL }

    /// One line saying where the gate stands.
    public var summary: String {
        let pending = requiredVersion ?? "?"
        let L = Localization.self
        switch phase {
        case .upToDate:
            // Never a good lookup: mapgate does not know whether it is up to date.
            guard record.lastLookupAt != nil else { return L.localized("not checked yet: the store has not been reached") }
            return L.localized("up to date")
        case .grace(let until):
            return L.format(
                L.localized("newer version %1$s known since %2$s, grace until %3$s"), pending, record.firstSeen.map(L.day) ?? "?", L.day(until))
        case .prompting(let left):
            return L.format(
                L.localized(
                    "newer version %1$s available: %2$s use left before the update is required",
                    "newer version %1$s available: %2$s uses left before the update is required", count: left), pending, String(left))
        case .closed:
            if isHeld {
                return L.localized("the last use before the update is held by another mapgate run (an update question not answered yet, or a command still running)")
            }
            if let minimumAppVersion, record.pendingVersion == nil {
                return L.format(L.localized("update required: the publisher requires mapgate %s or later"), minimumAppVersion)
            }
            return L.format(L.localized("update required: install version %s"), pending)
        }
    }
}
