import MapGate

private typealias L = Localization

/// `mapgate check`: look the store up now and show the gate.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = L.localized("Look up the newest app version now and show the update gate")
    static let discussion = L.localized("""
        Always asks the App Store lookup service. Exit 0 when the gate is open, 77 when it is
        closed, 69 when the lookup failed (network) and 65 when its answer was unusable (the
        saved state is still shown in both cases).
        """)

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
    }

    func run(_ context: Context) throws -> Int32 {
        let gate = try context.makeGate(createsDataDirectory: false)
        let report = try gate.check()
        context.warnAboutState(gate)
        GateOutput.show(report, context: context)
        if let error = report.lookupError {
            context.console.error(MapGateCLI.describe(error))
            return ExitCode.forError(error) == ExitCode.badData ? ExitCode.badData : ExitCode.unavailable
        }
        return report.isHeld ? ExitCode.tryAgain : report.phase.isClosed ? ExitCode.updateRequired : ExitCode.success
    }
}
