import MapGate

/// Shows a gate report as JSON or as aligned lines.
enum GateOutput {
    static func show(_ report: GateReport, context: Context) {
        if context.json {
            context.console.json(report.jsonLine)
        } else {
            for line in report.humanLines(console: context.console) { context.console.print(line) }
        }
    }
}
