import FoundationEssentials
import MapGate

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

    /// The `--json` object of `check` and `status`. Keys are documented in docs/gate.md.
    var jsonObject: [String: Any] {
        let release = record.lastRelease
        let lookupMessage: String? = lookupError.map { MapGateCLI.describe($0) } ?? record.lastLookupError
        return [
            "installedVersion": installedVersion,
            "storeVersion": release?.version ?? JSONValue.null,
            "releaseDate": Format.isoOrNull(release?.releaseDate),
            "releaseNotes": release?.releaseNotes ?? JSONValue.null,
            "storeURL": release?.storeURL ?? JSONValue.null,
            "state": stateName,
            "pendingVersion": record.pendingVersion ?? JSONValue.null,
            "firstSeen": Format.isoOrNull(record.firstSeen),
            "graceUntil": Format.isoOrNull(graceEnd),
            "usesLeft": usesLeft,
            "promptsShown": record.promptsShown,
            "lastLookup": Format.isoOrNull(record.lastLookupAt),
            "lookupError": lookupMessage ?? JSONValue.null,
        ]
    }

    /// The human form of the same data.
    func humanLines(console: Console) -> [String] {
        let release = record.lastRelease
        var rows: [(String, String)] = [("installed version", installedVersion)]
        if let release {
            var store = release.version
            if let date = release.releaseDate { store += " (released \(ISODate.day(date)))" }
            rows.append(("store version", store))
            if let url = release.storeURL { rows.append(("store URL", TerminalText.inline(url))) }
            if let notes = release.releaseNotes, !notes.isEmpty {
                rows.append(("release notes", GatePrompt.firstLines(notes, count: 3).joined(separator: "\n" + String(repeating: " ", count: 20))))
            }
        } else {
            rows.append(("store version", "unknown (no successful lookup yet)"))
        }
        if let last = record.lastLookupAt { rows.append(("last lookup", Format.dateTime(last))) }
        let color: Console.Color = phase.isClosed ? .red : (phase == .upToDate ? .green : .yellow)
        rows.append(("gate", console.paint(summary, color)))
        return rows.map { $0.0.padded(toLength: 20) + $0.1 }
    }
}
