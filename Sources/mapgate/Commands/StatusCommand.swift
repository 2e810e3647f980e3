import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate status`: the gate from the saved state, without the network.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = L.localized("Show the update gate from the saved state, without the network")

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
    }

    func run(_ context: Context) throws -> Int32 {
        let gate = try context.makeGate(createsDataDirectory: false)
        let report = try gate.status()
        context.warnAboutState(gate)
        GateOutput.show(report, context: context)
        // Where each installed region came from and when (the publisher or a mirror): people only.
        // A data directory that cannot be read is said, not taken for one with no region (issue 43).
        if !context.json {
            do {
                for region in try context.existingRegionLibrary()?.installed() ?? [] {
                    context.console.print(
                        Localization.format(
                            Localization.localized("region %1$s %2$s: installed %3$s from %4$s"), region.id, TerminalText.inline(region.version),
                            Localization.day(region.installedAt), RegionOrigin.label(region.origin)))
                }
            } catch {
                context.console.warning(L.localized("the installed regions cannot be listed: %1$s", errorMessage(error)))
            }
        }
        return report.isHeld ? ExitCode.tryAgain : report.phase.isClosed ? ExitCode.updateRequired : ExitCode.success
    }
}
