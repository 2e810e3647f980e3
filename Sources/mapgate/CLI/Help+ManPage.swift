import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate help man`: the manual page, mapgate(1), in roff, made from the same tables as
/// `--help` (the commands, their options, the global options, the configuration keys and the exit
/// codes), so that the two cannot drift. `scripts/package` writes it into the Debian package.
extension Help {
    static func manPage() -> String {
        var roff = [
            ".TH MAPGATE 1 \"\" \"mapgate \(BuildInfo.version)\" \"" + escape(L.localized("User Commands")) + "\"",
        ]
        // Where the output device has no glyph for a punctuation mark (`man` in the C locale
        // renders as ASCII: found by an attack, groff dropped "…" with a warning), its ASCII form.
        roff += asciiFallbacks.map { scalar, ascii in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let name = "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            // (not translated: groff requests)
            return ".if !c\(name) .char \(name) \(ascii)"
        }
        roff += [
            ".SH \"" + escape(L.localized("NAME")) + "\"",
            "mapgate \\- " + escape(L.localized("offline map regions, served locally, behind an update gate")),
            ".SH \"" + escape(L.localized("SYNOPSIS")) + "\"",
            ".B mapgate",
            "[\\fI" + escape(L.localized("global options")) + "\\fR] \\fI" + escape(L.localized("command")) + "\\fR [\\fI" + escape(L.localized("arguments")) + "\\fR]",
            ".SH \"" + escape(L.localized("DESCRIPTION")) + "\"",
            text(L.localized("""
                mapgate keeps a local cache of map regions (MBTiles files), installs and updates them \
                from a publisher's signed catalog, serves their tiles to map clients on this machine, \
                and holds users to the newest app version with an update gate whose rules are the \
                publisher's (the compiled-in profile and the root-owned managed policy), never the user's.
                """)),
            ".PP",
            text(L.localized("Global options work before or after the command name. Run 'mapgate help COMMAND' or 'mapgate COMMAND --help' for a command's help.")),
            ".SH \"" + escape(L.localized("COMMANDS")) + "\"",
        ]
        for command in MapGateCLI.commands {
            roff.append(".SS \"\(escape(command.name))\"")
            roff.append(".B " + escape(command.usage))
            roff.append(".br")
            // TRANSLATORS: a command's one-line summary as a sentence of the manual (a full stop added).
            roff.append(text(L.localized("%1$s.", command.abstract)))
            for paragraph in TextLayout.paragraphs(command.discussion) {
                roff += [".PP", text(paragraph)]
            }
            if !command.options.isEmpty {
                roff.append(".PP")
                roff.append(escape(L.localized("Options:")))
                roff += command.options.flatMap(optionItem)
            }
        }
        roff.append(".SH \"" + escape(L.localized("GLOBAL OPTIONS")) + "\"")
        roff += ParsedArguments.globalOptions.flatMap(optionItem)
        roff += [".SH \"" + escape(L.localized("CONFIGURATION")) + "\"", text(L.localized("The user's configuration file is a JSON object with these keys, all optional:"))]
        for key in Configuration.keys {
            roff += [".TP", "\\fB\(escape(key.name))\\fR (\(escape(key.type)))", text(key.summary)]
        }
        roff += [
            ".PP",
            text(L.localized("The gate's rules are read from the managed policy, /etc/mapgate/policy.json (or, only on a machine without that file, the file MAPGATE_POLICY names), honoured only when it and every folder above it are owned by root and writable by nobody else. Unsigned, it may only make the gate stricter; a policy that loosens it needs the publisher's signature beside it (policy.json.minisig). An example is in /usr/share/doc/mapgate/examples/policy.json. Its keys, all optional:")),
        ]
        for key in GateSettings.keys {
            roff += [".TP", "\\fB\(escape(key.name))\\fR (\(escape(key.type)))", text(key.summary)]
        }
        roff += [
            ".SH \"" + escape(L.localized("EXIT STATUS")) + "\"",
        ]
        for exit in exitCodes {
            roff += [".TP", "\\fB\(exit.code)\\fR", text(exit.meaning)]
        }
        roff += [
            ".SH \"" + escape(L.localized("ENVIRONMENT")) + "\"",
            ".TP", "\\fBMAPGATE_CONFIG\\fR", text(L.localized("the configuration file, when --config is not given")),
            ".TP", "\\fBMAPGATE_DATA_DIR\\fR", text(L.localized("the data directory, when --data-dir is not given")),
            ".TP", "\\fBMAPGATE_POLICY\\fR", text(L.localized("a managed policy file, used only when /etc/mapgate/policy.json does not exist (it must then exist itself)")),
            ".TP", "\\fBMAPGATE_KEY_PASSWORD\\fR", text(L.localized("the password of the publisher's secret key, for mapgate publish without a terminal")),
            ".TP", "\\fBXDG_CONFIG_HOME\\fR, \\fBXDG_DATA_HOME\\fR, \\fBXDG_STATE_HOME\\fR", text(L.localized("where the configuration, the regions and the gate's state live (~/.config, ~/.local/share and ~/.local/state when unset)")),
            ".TP", "\\fBNO_COLOR\\fR", text(L.localized("no colour on a terminal")),
            ".SH \"" + escape(L.localized("FILES")) + "\"",
            ".TP", "\\fI/etc/mapgate/policy.json\\fR", text(L.localized("the managed policy (root-owned; not shipped; keys under CONFIGURATION)")),
            ".TP", "\\fI/etc/mapgate/policy.json.minisig\\fR", text(L.localized("the publisher's signature of it, needed for a policy that loosens the gate")),
            ".TP", "\\fI~/.config/mapgate/config.json\\fR", text(L.localized("the user's configuration")),
            ".TP", "\\fI/usr/share/mapgate/demo\\fR", text(L.localized("the fixtures mapgate demo uses")),
            ".TP", "\\fI/usr/lib/systemd/user/mapgate\\-serve.service\\fR",
            text(L.localized("a user unit running mapgate serve on 127.0.0.1: systemctl \\-\\-user enable \\-\\-now mapgate\\-serve"), escaped: true),
            ".SH \"" + escape(L.localized("SEE ALSO")) + "\"",
            ".BR minisign (1),",
            ".BR sqlite3 (1),",
            ".BR systemctl (1);",
            "/usr/share/doc/mapgate/README.md",
        ]
        return adjustment(roff).joined(separator: "\n")
    }

    private static func optionItem(_ option: OptionSpec) -> [String] {
        var name = "\\fB\\-\\-\(escape(option.name))\\fR"
        if let value = option.value { name += " \\fI\(escape(value))\\fR" }
        if let short = option.short { name = "\\fB\\-\(escape(String(short)))\\fR, " + name }
        return [".TP", name, text(option.help)]
    }

    /// A line of running text: escaped, and never taken for a request.
    private static func text(_ line: String, escaped: Bool = false) -> String {
        let body = escaped ? wide(line) : escape(line)
        return body.hasPrefix(".") || body.hasPrefix("'") ? "\\&" + body : body
    }

    /// Backslashes and hyphens for roff (`-` is a hyphen there, `\-` the minus of an option).
    /// Characters outside ASCII as groff's `\[uXXXX]` (an ellipsis in a key's summary), which
    /// every groff renders without a warning.
    ///
    /// Chinese and Japanese put no spaces between words, where groff would break a line: after a
    /// wide character comes `\:` (a break point), but before closing punctuation and after
    /// opening punctuation (a line never starts with "。" nor ends with "（").
    private static func escape(_ text: String) -> String {
        wide(text.replacing("\\", with: "\\e").replacing("-", with: "\\-"))
    }

    /// Text already escaped for roff with its characters outside ASCII made `\[uXXXX]`.
    private static func wide(_ ascii: String) -> String {
        let scalars = Array(ascii.unicodeScalars)
        return scalars.indices.map { index in
            let scalar = scalars[index]
            guard !scalar.isASCII else { return String(scalar) }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            var piece = "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            if index + 1 < scalars.count, TextLayout.isWide(scalar), !TextLayout.isHangul(scalar), !TextLayout.opening.contains(scalar),
                !TextLayout.closing.contains(scalars[index + 1]) {
                piece += "\\:"
            }
            return piece
        }.joined()
    }

    /// Punctuation the pages use, and what stands for it on an ASCII device.
    private static let asciiFallbacks: [(Unicode.Scalar, String)] = [
        ("\u{2026}", "\\&..."), ("\u{2018}", "'"), ("\u{2019}", "'"), ("\u{201C}", "\""), ("\u{201D}", "\""), ("\u{2013}", "\\-"),
        ("\u{2014}", "\\-\\-"), ("\u{2192}", "\\->"), ("\u{00D7}", "x"), ("\u{00B7}", "*"),
    ]

    /// Left-aligned (not justified) when the page holds wide characters: justifying a line of
    /// CJK text between few break points spreads it apart.
    private static func adjustment(_ roff: [String]) -> [String] {
        guard roff.contains(where: { $0.contains("\\:") }) else { return roff }
        return [roff[0], ".ad l"] + roff.dropFirst()
    }
}
