import MapGate

/// Help text for the root and for each command.
enum Help {
    static func root() -> String {
        var lines = [
            "mapgate \(BuildInfo.version): offline map regions, served locally, behind an update gate.",
            "",
            "usage: mapgate [global options] <command> [arguments]",
            "",
            "commands:",
        ]
        let rows = MapGateCLI.commands.map { ($0.name, $0.abstract) }
        lines += rows.map { "  " + pad($0.0, 10) + $0.1 }
        lines += ["", "global options (before or after the command):"]
        lines += ParsedArguments.globalOptions.map(optionLine)
        lines += ["", "configuration keys (JSON object in the configuration file):"]
        lines += Configuration.keys.map { "  " + pad($0.name, 20) + "\($0.type): \($0.summary)" }
        lines += [
            "",
            "exit codes:",
        ]
        lines += wrapped(exitCodes.map { "\($0.code) \($0.short)" }, width: 90)
        lines += [
            "",
            "Run 'mapgate <command> --help' for a command's options.",
        ]
        return lines.joined(separator: "\n")
    }

    /// The exit codes, for `--help` (the short form) and the manual page.
    static let exitCodes: [(code: Int32, short: String, meaning: String)] = [
        (ExitCode.success, "ok", "ok"),
        (ExitCode.failure, "failure", "failure: a region not installed or not in the catalog, a missing tile, the data directory locked by another mapgate"),
        (ExitCode.usage, "usage or configuration error", "usage or configuration error: an unknown option, a bad configuration key, no catalogURL"),
        (ExitCode.badData, "bad data (package, catalog, lookup answer)", "bad data: a package, catalog or lookup answer that cannot be used; verify found damage"),
        (ExitCode.unavailable, "service unavailable (network, or a library)", "service unavailable: a network error or an HTTP error status (after the retries), or a library the command needs that cannot be opened"),
        (ExitCode.io, "I/O error", "I/O error: a local file could not be read or written, not enough disk space"),
        (ExitCode.updateRequired, "update required", "update required: the version gate is closed, or a region needs a newer mapgate"),
    ]

    /// `items` joined with ", " in lines of at most `width` columns, indented by two; an item is
    /// never split.
    private static func wrapped(_ items: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for (index, item) in items.enumerated() {
            let piece = item + (index < items.count - 1 ? "," : "")
            if !line.isEmpty, 2 + line.count + 1 + piece.count > width {
                lines.append("  " + line)
                line = piece
            } else {
                line += (line.isEmpty ? "" : " ") + piece
            }
        }
        if !line.isEmpty { lines.append("  " + line) }
        return lines
    }

    static func command(_ command: any Command.Type) -> String {
        var lines = ["mapgate \(command.name): \(command.abstract)", "", "usage: \(command.usage)"]
        if !command.discussion.isEmpty { lines += ["", command.discussion] }
        if !command.options.isEmpty {
            lines += ["", "options:"]
            lines += command.options.map(optionLine)
        }
        lines += ["", "global options:"]
        lines += ParsedArguments.globalOptions.map(optionLine)
        return lines.joined(separator: "\n")
    }

    private static func optionLine(_ option: OptionSpec) -> String {
        var name = "--\(option.name)"
        if let value = option.value { name += " \(value)" }
        if let short = option.short { name = "-\(short), " + name }
        return "  " + pad(name, 20) + option.help
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + "  " : text + String(repeating: " ", count: width - text.count)
    }
}
