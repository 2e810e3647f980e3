import FoundationEssentials
import Glibc
import MapGate

/// Asks the gate for one use (sync, open, serve, tile) and talks to the user about it.
enum GateGuard {
    /// Runs `work` as one use of the gate (``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``):
    /// the use is counted only if `work` delivers it, and given back otherwise, also when a signal
    /// ends the run (Ctrl-C at the prompt or while a FIFO waits, a closed terminal: exit 128 + the
    /// signal, ``InterruptibleUse``). Returns nil when the user chose "update now" at the prompt
    /// (nothing runs; the command exits 0). A closed gate throws ``GateClosedError`` (exit 77); a
    /// prompt left unanswered throws ``PromptUnansweredError`` (exit 75, nothing runs or counts).
    ///
    /// - Parameters:
    ///   - opening: the installed regions the command reads (see ``Gate/authorizeUse(opening:installing:payingServingDay:)``).
    ///   - installing: the regions the command may install.
    ///   - serving: a server's run (`serve`, `open`), which ends when the user stops it: said when
    ///     its use went back (stopped before its first tile; found by an attack: only "stopping…"
    ///     was said), and its paid day kept for a server started after it dies (``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``).
    static func withUse<Result>(
        _ context: Context, opening: [String] = [], installing: [String] = [], serving: Bool = false,
        _ work: (GateAuthorization) throws -> Result
    ) throws -> Result? {
        // Standard error, where the question goes, must take a byte before a use is reserved
        // for the run (system mode: ``Context/outputStallLimit``).
        try OutputDestination.requireReader(of: STDERR_FILENO, name: Localization.localized("standard error"), within: context.outputStallLimit)
        let gate = try context.makeGate()
        defer { context.warnAboutState(gate) }
        let held = InterruptibleUse(context)
        let result = try withExtendedLifetime(held) {
            try gate.use(
                opening: opening, installing: installing, serving: serving, reserving: held.reserving,
                confirm: { try confirm($0, context: context) }, work)
        }
        if serving, held.wasGivenBack { context.console.noteAboutUse(InterruptibleUse.givenBack) }
        return result
    }

    /// Runs `body`, the writing of a use's output: an output that fails once the use was delivered
    /// (a FIFO's reader gone after the first bytes) says that the use was counted, so that a run
    /// tried again knows it costs another (found by an attack: exit 74 said nothing of it).
    static func sayingWhenCounted<Result>(_ authorization: GateAuthorization, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as OutputError where authorization.isDelivered && !authorization.wasGivenBack {
            throw OutputError(
                path: error.path, reason: error.reason + L.localized(" (its use was counted: the first bytes had gone out)"), kind: error.kind)
        }
    }

    /// The code of a run whose user chose "update now" at the question: 0, or, for the system
    /// service's command whose output its caller relays to a file, the code that tells the caller
    /// to leave that file alone (``SystemService/Settings/declinedExitCode``).
    static func updateChosenCode(_ context: Context) -> Int32 {
        context.environment[SystemService.Settings.relayedOutputVariable] == "1" && (try? context.isSystemService()) == true
            ? SystemService.Settings.declinedExitCode : ExitCode.success
    }

    /// Shows what the gate decided (a notice, or the prompt with its question on a terminal):
    /// false when the user chose "update now". An answer that is not understood asks again,
    /// saying what the choices are; the end of input, or a third answer not understood, is no
    /// answer: ``PromptUnansweredError``, and the command does not run.
    static func confirm(_ authorization: GateAuthorization, context: Context) throws -> Bool {
        let console = context.console
        switch authorization.decision {
        case .allowed, .refused:
            if let day = authorization.continuedDay, context.environment[SystemService.Settings.callerUserVariable] != nil {
                // System mode: a session of the user's that the service's end or its terminal's
                // ended, not a server the user ran.
                console.note(
                    Localization.localized(
                        "your session before this one ended without being stopped (the system service or its terminal went away); this one serves out the day it paid for, until %1$s: no use counted",
                        LocalTime.text(day.end)))
            } else if let day = authorization.continuedDay {
                console.note(
                    Localization.localized(
                        "the server before this one (pid %1$s) ended without being stopped; this one serves out the day it paid for, until %2$s: no use counted",
                        "\(day.pid)", LocalTime.text(day.end)))
            }
            return true
        case .notice(let until):
            console.note(
                Localization.format(
                    Localization.localized("note: mapgate %1$s is available; please update (prompts start %2$s)"),
                    authorization.report.requiredVersion ?? "?", Localization.day(until)))
            // What follows, and where to update (found by an attack: the notice said neither, in
            // any language, so the first the user heard of the count was the count itself).
            // The uses left, not the rules' number (found by the next attack: "5" with 2 left); "up
            // to", since a publisher's `closeAfterDays` may close the gate before they are spent.
            let left = authorization.report.usesLeft
            let then =
                left == 0
                ? Localization.localized("then mapgate requires the update")
                : Localization.format(
                    Localization.localized("then up to %1$s more use, each asked, before mapgate requires the update", "then up to %1$s more uses, each asked, before mapgate requires the update", count: left),
                    String(left))
            let store = authorization.report.storeURL.map { ": " + $0 } ?? ""
            console.note(then + store)
            return true
        case .prompt(let usesLeft):
            let prompt = GatePrompt(report: authorization.report, usesLeft: usesLeft)
            // The use is held while the question is open (for the last use, other runs see the
            // gate closed): a question nobody answers is no answer after a while. The tests (debug
            // builds only, as every test hook) may shorten it, never lengthen it.
            #if DEBUG
            let shortened = context.environment["MAPGATE_PROMPT_TIMEOUT"].flatMap(Double.init) ?? .infinity
            #else
            let shortened = Double.infinity
            #endif
            let timeout = min(PromptAnswer.timeout, shortened)
            // A prompt stderr does not take in that time (a full pipe nobody reads) is no answer:
            // the run held its use of the gate while it waited (found by an attack).
            let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
            // In system mode the prompt's lines wait no longer for their reader than a command's
            // output does (found by an attack: `2>&1` into a full pipe held the machine's use for
            // the question's ten minutes).
            let written = ContinuousClock.now + .milliseconds(Int64(min(timeout, context.outputStallLimit ?? timeout) * 1000))
            // What was typed before the question was shown is no answer to it (found by an attack:
            // `l` typed while a slow lookup ran answered a question the user never saw).
            if console.isInteractive { console.discardTypedAhead() }
            guard console.prompt(lines: prompt.lines, until: written) else { throw PromptUnansweredError() }
            guard console.isInteractive, !context.json else { return true }
            // A terminal another program reads (found by an attack: `setsid mapgate …` at a shell
            // read its answer from the keys typed at the shell).
            if TerminalInput.isDetached(from: STDIN_FILENO) { throw PromptUnansweredError(detached: true) }
            var question = Localization.localized("Update now or later? [u]pdate now / [l]ater: ")
            for _ in 0..<PromptAnswer.attempts {
                guard let text = console.ask(question, until: deadline) else { break }
                switch PromptAnswer(text) {
                case .updateNow:
                    // The service never starts a browser: it would run as the service's user with
                    // the caller's terminal (found by an attack); the user is told the address.
                    openStore(prompt.storeURL, console: console, startsBrowser: !((try? context.isSystemService()) ?? true))
                    return false
                case .later:
                    return true
                case nil:
                    question = Localization.localized("Please answer u (update now) or l (later), or press Ctrl-C to stop: ")
                }
            }
            throw PromptUnansweredError()
        }
    }

    /// Said within a few seconds at most: the use is still held (found by an attack: on a
    /// terminal stopped with Ctrl-S a plain write blocked for good).
    private static func openStore(_ url: String?, console: Console, startsBrowser: Bool) {
        let until = ContinuousClock.now + .seconds(5)
        guard let url else {
            console.prompt(lines: [Localization.localized("Update mapgate from your app store.")], until: until)
            return
        }
        // Started, not waited for (found by an attack: a text browser that xdg-open ran at the
        // terminal stopped on SIGTTIN, and mapgate waited for it with the use held); the address
        // is said either way, in case no browser comes up.
        if startsBrowser { _ = spawn(["xdg-open", url], wait: false) }
        console.prompt(lines: [Localization.format(Localization.localized("Open %s to update."), url)], until: until)
    }
}
