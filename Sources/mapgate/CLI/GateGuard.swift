import FoundationEssentials
import MapGate

/// Asks the gate for one use (sync, open, serve, tile) and talks to the user about it.
enum GateGuard {
    /// The authorization for this run, or nil when the user chose "update now" (the command
    /// then exits 0 without running). A closed gate throws ``GateClosedError`` (exit 77).
    ///
    /// - Parameters:
    ///   - opening: the installed regions the command reads (see ``Gate/authorizeUse(opening:installing:)``).
    ///   - installing: the regions `sync` may install.
    static func authorize(_ context: Context, opening: [String] = [], installing: [String] = []) throws -> GateAuthorization? {
        let gate = try context.makeGate()
        defer { context.warnAboutState(gate) }
        let authorization = try gate.authorizeUse(opening: opening, installing: installing)
        let console = context.console
        switch authorization.decision {
        case .allowed, .refused:
            return authorization
        case .notice(let until):
            console.note(
                "note: mapgate \(authorization.report.requiredVersion ?? "?") is available; please update (prompts start \(ISODate.day(until)))")
            return authorization
        case .prompt(let usesLeft):
            let prompt = GatePrompt(report: authorization.report, usesLeft: usesLeft)
            for line in prompt.lines { console.prompt(line) }
            guard console.isInteractive, !context.json else { return authorization }
            let answer = console.ask("Update now or later? [u]pdate now / [l]ater: ")?.lowercased() ?? "l"
            guard answer.hasPrefix("u") || answer == "now" else { return authorization }
            openStore(prompt.storeURL, console: console)
            return nil
        }
    }

    /// Refuses (exit 77) when the gate is closed now, counting nothing: looks the store up first
    /// when a lookup is due. `sync` asks this before it checks packages on the network.
    static func refuseIfClosed(_ context: Context) throws {
        let gate = try context.makeGate()
        defer { context.warnAboutState(gate) }
        let report = try gate.refreshIfDue() ?? gate.status()
        if report.phase.isClosed { throw gate.closedError(report) }
    }

    private static func openStore(_ url: String?, console: Console) {
        guard let url else {
            console.prompt("Update mapgate from your app store.")
            return
        }
        if spawn(["xdg-open", url], wait: true) == 0 { return }
        console.prompt("Open \(url) to update.")
    }
}
