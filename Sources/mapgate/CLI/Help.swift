import MapGate

private typealias L = Localization

/// Help text for the root and for each command.
///
/// `width`: the columns of the terminal it is shown on, which every line is fitted to (running
/// text wrapped by paragraph, an option's meaning beside its name or, on a phone's 40 columns,
/// under it: ``TextLayout``), at most ``readableWidth``; 0 when it is not shown on a terminal, and
/// each line is as written.
enum Help {
    /// The widest a help line is made on a wide terminal: running text wider than this is hard to
    /// read.
    static let readableWidth = 100

    static func root(width: Int = 0) -> String {
        let layout = Layout(width: width)
        var lines = layout.text("mapgate \(BuildInfo.version): " + L.localized("offline map regions, served locally, behind an update gate."))
        lines.append("")
        lines += layout.text(L.localized("usage: %1$s", "mapgate " + L.localized("[global options] <command> [arguments]")))
        lines += [""] + layout.text(L.localized("commands:"))
        lines += MapGateCLI.commands.flatMap { layout.item($0.name, $0.abstract, column: 12) }
        lines += [""] + layout.text(L.localized("global options (before or after the command):"))
        lines += ParsedArguments.globalOptions.flatMap(layout.option)
        lines += [""] + layout.text(L.localized("configuration keys (JSON object in the configuration file):"))
        lines += Configuration.keys.flatMap { layout.item($0.name, "\($0.type): \($0.summary)", column: 22) }
        lines += [""] + layout.text(L.localized("exit codes:"))
        lines += wrapped(exitCodes.map { "\($0.code) \($0.short)" }, width: layout.width.map { min($0, 90) } ?? 90)
        lines.append("")
        lines += layout.text(L.localized("Run 'mapgate <command> --help' for a command's options."))
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
            // An item wider than a line (on a phone's 40 columns) has lines of its own.
            if 2 + TerminalText.width(piece) > width {
                if !line.isEmpty { lines.append("  " + line) }
                lines += TextLayout.wrapped(piece, width: width - 2).map { "  " + $0 }
                line = ""
            } else if !line.isEmpty, 2 + TerminalText.width(line) + space.count + TerminalText.width(piece) > width {
                lines.append("  " + line)
                line = piece
            } else {
                line += (line.isEmpty ? "" : space) + piece
            }
        }
        if !line.isEmpty { lines.append("  " + line) }
        return lines
    }

    static func command(_ command: any Command.Type, width: Int = 0) -> String {
        let layout = Layout(width: width)
        var lines = layout.text("mapgate \(command.name): \(command.abstract)")
        lines.append("")
        lines += layout.text(L.localized("usage: %1$s", command.usage))
        if !command.discussion.isEmpty {
            lines.append("")
            if let width = layout.width {
                lines += TextLayout.paragraphs(command.discussion).map { TextLayout.wrapped($0, width: width) }.joined(separator: [""])
            } else {
                lines.append(command.discussion)
            }
        }
        if !command.options.isEmpty {
            lines += [""] + layout.text(L.localized("options:"))
            lines += command.options.flatMap(layout.option)
        }
        lines += [""] + layout.text(L.localized("global options:"))
        lines += ParsedArguments.globalOptions.flatMap(layout.option)
        return lines.joined(separator: "\n")
    }

    /// How the help's lines are laid out: as written (no terminal), or fitted to `width` columns.
    private struct Layout {
        /// The columns to fit; nil when the help is not shown on a terminal.
        let width: Int?

        init(width: Int) {
            self.width = width > 0 ? min(width, Help.readableWidth) : nil
        }

        /// A line of running text.
        func text(_ line: String) -> [String] {
            guard let width else { return [line] }
            return TextLayout.wrapped(line, width: width)
        }

        /// A name and its meaning, the meaning from `column` on.
        func item(_ name: String, _ meaning: String, column: Int) -> [String] {
            guard let width else { return ["  " + Help.pad(name, column - 2) + meaning] }
            return TextLayout.item(name, meaning, column: column, width: width)
        }

        func option(_ option: OptionSpec) -> [String] {
            var name = "--\(option.name)"
            if let value = option.value { name += " \(value)" }
            if let short = option.short { name = "-\(short), " + name }
            return item(name, option.help, column: 22)
        }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        let columns = TerminalText.width(text)
        return columns >= width ? text + "  " : text + String(repeating: " ", count: width - columns)
    }
}
