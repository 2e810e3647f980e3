import FoundationEssentials
import MapGate

/// Asks the gate for one use (sync, open, serve, tile) and talks to the user about it.
enum GateGuard {
    /// Runs `work` as one use of the gate (``Gate/use(opening:installing:confirm:_:)``): the use
    /// is counted only if `work` delivers it, and given back otherwise. Returns nil when the user
    /// chose "update now" at the prompt (nothing runs; the command exits 0). A closed gate throws
    /// ``GateClosedError`` (exit 77).
    ///
    /// - Parameters:
    ///   - opening: the installed regions the command reads (see ``Gate/authorizeUse(opening:installing:)``).
    ///   - installing: the regions the command may install.
    ///   - interruptible: Ctrl-C (SIGINT) or SIGTERM during `work` gives the use back (unless it
    ///     was delivered) and exits 130 or 143; for commands that do not stop cleanly on their
    ///     own (`serve` and `open` do).
    static func withUse<Result>(
        _ context: Context, opening: [String] = [], installing: [String] = [], interruptible: Bool = false,
        _ work: (GateAuthorization) throws -> Result
    ) throws -> Result? {
        let gate = try context.makeGate()
        defer { context.warnAboutState(gate) }
        let held = InterruptibleUse(context)
        return try gate.use(
            opening: opening, installing: installing,
            confirm: { authorization in
                held.hold(authorization)
                return confirm(authorization, context: context)
            }
        ) { authorization in
            let console = context.console
            let cleanup = interruptible ? InterruptCleanup(removing: [], console: console) { held.giveBack(console: console) } : nil
            defer { withExtendedLifetime(cleanup) {} }
            return try work(authorization)
        }
    }

    /// Shows what the gate decided (a notice, or the prompt with its question on a terminal):
    /// false when the user chose "update now".
    static func confirm(_ authorization: GateAuthorization, context: Context) -> Bool {
        let console = context.console
        switch authorization.decision {
        case .allowed, .refused:
            return true
        case .notice(let until):
            console.note(
                Localization.format(
                    Localization.localized("note: mapgate %1$s is available; please update (prompts start %2$s)"),
                    authorization.report.requiredVersion ?? "?", Localization.day(until)))
            return true
        case .prompt(let usesLeft):
            let prompt = GatePrompt(report: authorization.report, usesLeft: usesLeft)
            for line in prompt.lines { console.prompt(line) }
            guard console.isInteractive, !context.json else { return true }
            let answer = console.ask(Localization.localized("Update now or later? [u]pdate now / [l]ater: "))?.lowercased() ?? "l"
            guard answer.hasPrefix("u") || answer == "now" else { return true }
            openStore(prompt.storeURL, console: console)
            return false
        }
    }

    private static func openStore(_ url: String?, console: Console) {
        guard let url else {
            console.prompt(Localization.localized("Update mapgate from your app store."))
            return
        }
        if spawn(["xdg-open", url], wait: true) == 0 { return }
        console.prompt(Localization.format(Localization.localized("Open %s to update."), url))
    }
}
