import MapGate

private typealias L = Localization

/// A command line split into global options, the command's options, and positional arguments.
struct ParsedArguments {
    var command: String?
    var positional: [String] = []
    var flags: Set<String> = []
    var values: [String: String] = [:]
    /// Every value of each option, in order (for repeatable options such as `--allow-host`).
    var allValues: [String: [String]] = [:]

    var isHelp: Bool { flags.contains("help") }
    var isVersion: Bool { flags.contains("version") }

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
    /// Every value given to a repeatable option, in order.
    func values(_ name: String) -> [String] { allValues[name] ?? [] }

    /// Options every command takes, before or after the command name.
    static let globalOptions: [OptionSpec] = [
        OptionSpec(name: "config", value: "FILE", help: L.localized("configuration file (else $MAPGATE_CONFIG, else $XDG_CONFIG_HOME/mapgate/config.json)")),
        OptionSpec(name: "data-dir", value: "DIR", help: L.localized("data directory (else $MAPGATE_DATA_DIR, else $XDG_DATA_HOME/mapgate)")),
        OptionSpec(name: "json", help: L.localized("machine-readable output (one JSON object per line)")),
        OptionSpec(name: "quiet", short: "q", help: L.localized("print only errors")),
        OptionSpec(name: "help", short: "h", help: L.localized("show help")),
        OptionSpec(name: "version", help: L.localized("print mapgate's version")),
    ]

    /// What to say of a word that holds an ideographic space (U+3000, what the space bar types
    /// with a CJK input method in full-width mode), which the shell does not split at, and which
    /// no message shows (found by an attack: "unknown command 'list　--json'"); empty when none.
    static func fullWidthSpaceHint(_ word: String) -> String {
        guard word.contains("\u{3000}") else { return "" }
        return L.localized(" (it holds a full-width space, U+3000, which does not separate words: type an ordinary space)")
    }

    /// Parses `arguments` (without the program name). The command's options are looked up in
    /// `commandOptions` once the command name is known.
    static func parse(_ arguments: [String], commandOptions: (String) -> [OptionSpec]?) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositional = false
        func options() -> [OptionSpec] {
            globalOptions + (parsed.command.flatMap(commandOptions) ?? [])
        }
        func usage() -> String {
            parsed.command.map { "mapgate \($0) --help" } ?? "mapgate --help"
        }
        while index < arguments.count {
            let typed = arguments[index]
            var argument = typed
            index += 1
            // An option typed with an input method's full-width forms is the option (found by an
            // attack: `－－json` was an "unexpected argument", `--ｊｓｏｎ` unknown), as a command
            // is: its name folded, not a value after "=".
            if !onlyPositional, argument.hasPrefix("－") || argument.hasPrefix("-") {
                let name = argument.prefix { $0 != "=" && $0 != "＝" }
                argument = FullWidth.ascii(String(name)) + (name.count < argument.count ? "=" + argument.dropFirst(name.count + 1) : "")
            }
            // An empty argument is a shell variable that was not set (found by an attack:
            // `mapgate mirror "$STICK"` wrote a mirror into the current folder): never a name.
            if argument.isEmpty {
                throw UsageError(message: L.localized("argument %1$s is empty (an unset shell variable?)", "\(index)"), usage: usage())
            }
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") || isNegativeNumber(argument) {
                if parsed.command == nil, !onlyPositional {
                    // A command typed with an input method's full-width letters, or capitals, is
                    // the command (`ｓｙｎｃ`), as a region's id is.
                    let folded = FullWidth.ascii(argument).lowercased()
                    parsed.command = commandOptions(folded) != nil ? folded : argument
                } else {
                    parsed.positional.append(argument)
                }
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
            } else {
                guard argument.count == 2, let spec = options().first(where: { $0.short == argument.last }) else {
                    throw UsageError(message: L.localized("unknown option %1$s", "\(argument)"), usage: usage())
                }
                name = spec.name
            }
            guard let spec = options().first(where: { $0.name == name }) else {
                var message = L.localized("unknown option --%1$s", "\(name)")
                let names: [String] = options().map { $0.name }
                if let meant = Suggestion.closest(to: name, among: names) {
                    message = L.localized("unknown option --%1$s; did you mean --%2$s?", "\(name)", meant)
                }
                throw UsageError(message: message + Self.fullWidthSpaceHint(typed), usage: usage())
            }
            if spec.value == nil {
                guard inlineValue == nil else {
                    throw UsageError(message: L.localized("option --%1$s takes no value", "\(name)"), usage: usage())
                }
                parsed.flags.insert(name)
            } else {
                if inlineValue == nil {
                    guard index < arguments.count else {
                        throw UsageError(message: L.localized("option --%1$s needs a value (%2$s)", "\(name)", "\(spec.value!)"), usage: usage())
                    }
                    inlineValue = arguments[index]
                    index += 1
                }
                if inlineValue?.isEmpty == true {
                    throw UsageError(message: L.localized("option --%1$s needs a value (%2$s), not an empty one (an unset shell variable?)", "\(name)", "\(spec.value!)"), usage: usage())
                }
                parsed.values[name] = inlineValue
                if let inlineValue { parsed.allValues[name, default: []].append(inlineValue) }
            }
        }
        return parsed
    }

    private static func isNegativeNumber(_ text: String) -> Bool {
        text.count > 1 && text.hasPrefix("-") && Double(text) != nil
    }
}
