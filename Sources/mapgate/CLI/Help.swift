import MapGate

private typealias L = Localization

/// Help text for the root and for each command.
enum Help {
    static func root() -> String {
        var lines = [
            "mapgate \(BuildInfo.version): " + L.localized("offline map regions, served locally, behind an update gate."),
            "",
            L.localized("usage: %1$s", "mapgate " + L.localized("[global options] <command> [arguments]")),
            "",
            L.localized("commands:"),
        ]
        let rows = MapGateCLI.commands.map { ($0.name, $0.abstract) }
        lines += rows.map { "  " + pad($0.0, 10) + $0.1 }
        lines += ["", L.localized("global options (before or after the command):")]
        lines += ParsedArguments.globalOptions.map(optionLine)
        lines += ["", L.localized("configuration keys (JSON object in the configuration file):")]
        lines += Configuration.keys.map { "  " + pad($0.name, 20) + "\($0.type): \($0.summary)" }
        lines += [
            "",
            L.localized("exit codes:"),
        ]
        lines += wrapped(exitCodes.map { "\($0.code) \($0.short)" }, width: 90)
        lines += [
            "",
            L.localized("Run 'mapgate <command> --help' for a command's options."),
        ]
        return lines.joined(separator: "\n")
    }

    /// The exit codes, for `--help` (the short form) and the manual page.
    static let exitCodes: [(code: Int32, short: String, meaning: String)] = [
        (ExitCode.success, L.localized("ok"), L.localized("ok")),
        (ExitCode.failure, L.localized("failure"), L.localized("failure: a region not installed or not in the catalog, a missing tile, the data directory locked by another mapgate")),
        (ExitCode.usage, L.localized("usage or configuration error"), L.localized("usage or configuration error: an unknown option, a bad configuration key, no catalogURL")),
        (ExitCode.badData, L.localized("bad data (package, catalog, lookup answer)"), L.localized("bad data: a package, catalog or lookup answer that cannot be used; verify found damage")),
        (ExitCode.unavailable, L.localized("service unavailable (network, or a library)"), L.localized("service unavailable: a network error or an HTTP error status (after the retries), a library the command needs that cannot be opened, or a port another program holds (serve, open)")),
        (ExitCode.io, L.localized("I/O error"), L.localized("I/O error: a local file could not be read or written, not enough disk space")),
        (ExitCode.tryAgain, L.localized("no answer at the update prompt"), L.localized("no answer at the update prompt (end of input, or three answers not understood), or the last use held by another run's question: nothing ran and no use was counted")),
        (ExitCode.updateRequired, L.localized("update required"), L.localized("update required: the version gate is closed, or a region needs a newer mapgate")),
    ]

    /// `items` joined with the language's list separator (", "; "、" in Chinese and Japanese:
    /// found by an attack, the translated items were joined with an ASCII comma) in lines of at
    /// most `width` columns, indented by two; an item is never split.
    private static func wrapped(_ items: [String], width: Int) -> [String] {
        let separator = L.localized(", ")
        let mark = separator.hasSuffix(" ") ? String(separator.dropLast()) : separator
        let space = separator.hasSuffix(" ") ? " " : ""
        var lines: [String] = []
        var line = ""
        for (index, item) in items.enumerated() {
            let piece = item + (index < items.count - 1 ? mark : "")
            if !line.isEmpty, 2 + TerminalText.width(line) + space.count + TerminalText.width(piece) > width {
                lines.append("  " + line)
                line = piece
            } else {
                line += (line.isEmpty ? "" : space) + piece
            }
        }
        if !line.isEmpty { lines.append("  " + line) }
        return lines
    }

    static func command(_ command: any Command.Type) -> String {
        var lines = ["mapgate \(command.name): \(command.abstract)", "", L.localized("usage: %1$s", command.usage)]
        if !command.discussion.isEmpty { lines += ["", command.discussion] }
        if !command.options.isEmpty {
            lines += ["", L.localized("options:")]
            lines += command.options.map(optionLine)
        }
        lines += ["", L.localized("global options:")]
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
        let columns = TerminalText.width(text)
        return columns >= width ? text + "  " : text + String(repeating: " ", count: width - columns)
    }
}
