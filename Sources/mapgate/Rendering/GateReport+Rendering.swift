import FoundationEssentials
import MapGate

private typealias L = Localization

extension GateReport {
    /// The stable `state` value of `--json`.
    var stateName: String {
        switch phase {
        case .upToDate: "up-to-date"
        case .grace: "grace"
        case .prompting: "prompting"
        case .closed: "closed"
        }
    }

    /// The `--json` line of `check` and `status`. Keys are documented in docs/gate.md.
    struct Line: Encodable {
        var installedVersion: String
        var storeVersion: String?
        var releaseDate: String?
        var releaseNotes: String?
        var storeURL: String?
        var state: String
        var pendingVersion: String?
        var firstSeen: String?
        var graceUntil: String?
        var usesLeft: Int
        var promptsShown: Int
        /// Prompted uses counted for runs that have not delivered them yet (a question not answered).
        var usesHeld: Int
        var lastLookup: String?
        var lookupError: String?
        /// "per-user" or "system" (issue 36).
        var mode: String
    }

    func jsonLine(mode: MachineMode) -> Line {
        let release = record.lastRelease
        return Line(
            installedVersion: installedVersion, storeVersion: release?.version, releaseDate: release?.releaseDate.map(Format.iso),
            releaseNotes: release?.releaseNotes, storeURL: release?.storeURL, state: stateName, pendingVersion: record.pendingVersion,
            firstSeen: record.firstSeen.map(Format.iso), graceUntil: graceEnd.map(Format.iso), usesLeft: usesLeft,
            promptsShown: record.promptsShown, usesHeld: record.reservations.count, lastLookup: record.lastLookupAt.map(Format.iso),
            lookupError: lookupError.map { MapGateCLI.describe($0) } ?? record.lastLookupError, mode: mode.rawValue)
    }

    /// The human form of the same data.
    func humanLines(console: Console, mode: MachineMode) -> [String] {
        let release = record.lastRelease
        var rows: [(String, String)] = [(L.localized("installed version"), installedVersion)]
        if let release {
            var store = release.version
            if let date = release.releaseDate { store += L.localized(" (released %1$s)", Localization.day(date)) }
            rows.append((L.localized("store version"), store))
            if let url = release.storeURL { rows.append((L.localized("store URL"), TerminalText.inline(url))) }
            if let notes = release.releaseNotes, !notes.isEmpty {
                rows.append((L.localized("release notes"), GatePrompt.firstLines(notes, count: 3).joined(separator: "\n" + String(repeating: " ", count: 20))))
            }
        } else {
            rows.append((L.localized("store version"), L.localized("unknown (no successful lookup yet)")))
        }
        if let last = record.lastLookupAt { rows.append((L.localized("last lookup"), LocalTime.text(last))) }
        let color: Console.Color = phase.isClosed && !isHeld ? .red : (phase == .upToDate ? .green : .yellow)
        rows.append((L.localized("gate"), console.paint(summary, color)))
        // A recovering record refuses every use until a lookup succeeds: "up to date" alone
        // would hide why the maps are refused.
        switch mode {
        case .system: rows.append((L.localized("mode"), L.localized("system: the machine's system service keeps the gate and the maps (managed policy)")))
        case .perUser: rows.append((L.localized("mode"), L.localized("per-user: this user's own gate and maps (no managed policy sets system mode)")))
        }
        if record.isRecovering {
            rows.append((L.localized("recovering"), console.paint(L.localized("the gate's state was lost or changed: the next use needs one successful store lookup ('mapgate check')"), .red)))
        }
        // Labels padded by terminal columns (a CJK label takes two per character) to 20.
        return rows.map { $0.0 + String(repeating: " ", count: max(1, 20 - TerminalText.width($0.0))) + $0.1 }
    }
}
