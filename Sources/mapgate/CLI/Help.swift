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
            "  0 ok, 1 failure, 64 usage or configuration error, 65 bad data (package, catalog,",
            "  lookup answer), 69 service unavailable (network), 74 I/O error, 77 update required",
            "",
            "Run 'mapgate <command> --help' for a command's options.",
        ]
        return lines.joined(separator: "\n")
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
