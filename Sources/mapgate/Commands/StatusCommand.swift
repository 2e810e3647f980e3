import MapGate

/// `mapgate status`: the gate from the saved state, without the network.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show the update gate from the saved state, without the network"

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
    }

    func run(_ context: Context) throws -> Int32 {
        let gate = try context.makeGate()
        let report = try gate.status()
        context.warnAboutState(gate)
        GateOutput.show(report, context: context)
        return report.phase.isClosed ? ExitCode.updateRequired : ExitCode.success
    }
}
