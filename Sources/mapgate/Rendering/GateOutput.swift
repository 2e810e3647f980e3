import MapGate

/// Shows a gate report as JSON or as aligned lines.
enum GateOutput {
    static func show(_ report: GateReport, context: Context) {
        let mode = (try? context.gateSettings().mode) ?? .perUser
        if context.json {
            context.console.json(report.jsonLine(mode: mode))
        } else {
            for line in report.humanLines(console: context.console, mode: mode) { context.console.print(line) }
        }
    }
}
