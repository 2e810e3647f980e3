import FoundationEssentials
import MapGate

/// `mapgate help completions bash|zsh|fish`: shell completion scripts made from the command table
/// (the same one `--help` prints), so that they cannot drift from it. `scripts/package` installs
/// them. Region ids come from `mapgate list --json` (offline); `sync` completes the installed ids
/// and those of the catalog the last sync kept (`mapgate catalog --saved --json`, offline too).
enum Completions {
    /// What the `help` command is, as the completions describe it.
    static var helpAbstract: String { L.localized("help for mapgate or a command") }

    /// The commands offered: all but `system-service`, which systemd runs (`mapgate sy<Tab>` is
    /// `sync`).
    private static var completed: [any Command.Type] { MapGateCLI.commands.filter { $0.name != SystemServiceCommand.name } }

    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash()
        case "zsh": zsh()
        case "fish": fish()
        default: nil
        }
    }

    /// What a positional argument is, from its name in the usage (`REGION`, `INPUT_DIR`, `Z`).
    enum Argument: Equatable { case region, offeredRegion, directory, other }

    /// A command's positional arguments, from its usage (`REGION Z X Y`, `[REGION...]`), and
    /// whether the last one repeats.
    static func positionals(of command: any Command.Type) -> (names: [String], kinds: [Argument], lastRepeats: Bool) {
        let words = command.arguments.split(separator: " ").map(String.init)
        let names = words.map { $0.trimming(where: { "[].".unicodeScalars.contains($0) }) }
        let kinds = names.map { name -> Argument in
            if name == "REGION" { return command.name == SyncCommand.name ? .offeredRegion : .region }
            if name == "DIR" || name.hasSuffix("_DIR") { return .directory }
            return .other
        }
        return (names, kinds, words.last?.contains("...") ?? false)
    }

    /// What an option's value is, from its placeholder (`DIR`, `OUT_DIR`, `FILE`, `PORT`).
    private enum Value { case file, directory, other }

    private static func valueKind(_ placeholder: String) -> Value {
        if placeholder == "DIR" || placeholder.hasSuffix("_DIR") { return .directory }
        if placeholder == "FILE" || placeholder.hasSuffix("_FILE") { return .file }
        return .other
    }

    private static let regionIDs = #"mapgate list --json 2>/dev/null | sed -n 's/.*"id":"\([^"]*\)".*/\1/p'"#
    private static let offeredIDs =
        #"{ mapgate list --json; mapgate catalog --saved --json; } 2>/dev/null | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' | sort -u"#

    private static func names(_ option: OptionSpec) -> [String] {
        ["--" + option.name] + (option.short.map { ["-" + String($0)] } ?? [])
    }

    // MARK: bash

    private static func bash() -> String {
        let commands = completed.map { $0.name }
        let global = ParsedArguments.globalOptions.flatMap(names)
        var script = [
            "# bash completion for mapgate \(BuildInfo.version), made by `mapgate help completions bash`",
            "_mapgate_regions() { \(regionIDs); }",
            "_mapgate_offered() { \(offeredIDs); }",
            "_mapgate() {",
            "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
            "  local command=\"\" position=0 i",
            "  for ((i = 1; i < COMP_CWORD; i++)); do",
            "    case \"$command:${COMP_WORDS[i]}\" in",
        ]
        // Options that take a value skip it while looking for the command and counting positions.
        var valued: [String] = []
        for option in ParsedArguments.globalOptions where option.value != nil {
            valued += names(option).map { "*:" + $0 }
        }
        for command in completed {
            for option in command.options where option.value != nil {
                valued += names(option).map { command.name + ":" + $0 }
            }
        }
        script += [
            "      \(valued.joined(separator: "|"))) ((i++)) ;;",
            "      *:-*) ;;",
            "      :*) command=\"${COMP_WORDS[i]}\" ;;",
            "      *) ((position++)) ;;",
            "    esac",
            "  done",
            "  case \"$command:$prev\" in",
        ]
        var files: [String] = [], directories: [String] = [], free: [String] = []
        for (command, option) in [("*", ParsedArguments.globalOptions)] + completed.map({ ($0.name, $0.options) }) {
            for spec in option where spec.value != nil {
                let patterns = names(spec).map { command + ":" + $0 }
                switch valueKind(spec.value!) {
                case .directory: directories += patterns
                case .file: files += patterns
                case .other: free += patterns
                }
            }
        }
        if !files.isEmpty { script.append("    \(files.joined(separator: "|"))) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;") }
        if !directories.isEmpty { script.append("    \(directories.joined(separator: "|"))) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;") }
        if !free.isEmpty { script.append("    \(free.joined(separator: "|"))) return ;;") }
        script += [
            "  esac",
            "  local options=\"\(global.joined(separator: " "))\" words=\"\"",
            "  case \"$command\" in",
            "    \"\") COMPREPLY=($(compgen -W \"\(commands.joined(separator: " ")) help $options\" -- \"$cur\")); return ;;",
            "    help) words=\"\(commands.joined(separator: " "))\" ;;",
        ]
        for command in completed {
            let own = command.options.flatMap(names)
            var line = "    \(command.name))"
            if !own.isEmpty { line += " options+=\" \(own.joined(separator: " "))\";" }
            let positional = positionals(of: command)
            var positions: [String] = []
            for (index, kind) in positional.kinds.enumerated() {
                let pattern = positional.lastRepeats && index == positional.kinds.count - 1 ? "*" : "\(index)"
                switch kind {
                case .region: positions.append("\(pattern)) words=\"$(_mapgate_regions)\" ;;")
                case .offeredRegion: positions.append("\(pattern)) words=\"$(_mapgate_offered)\" ;;")
                case .directory: positions.append("\(pattern)) COMPREPLY=($(compgen -d -- \"$cur\")) ;;")
                case .other: break
                }
            }
            if !positions.isEmpty {
                line += " [[ \"$cur\" == -* ]] || case $position in \(positions.joined(separator: " ")) esac;"
            }
            script.append(line + " ;;")
        }
        script += [
            "  esac",
            "  if [[ \"$cur\" == -* ]]; then words=\"$options\"; fi",
            "  [[ -n \"$words\" ]] && COMPREPLY+=($(compgen -W \"$words\" -- \"$cur\"))",
            "  return 0",
            "}",
            "complete -F _mapgate mapgate",
        ]
        return script.joined(separator: "\n")
    }

    // MARK: zsh

    private static func zsh() -> String {
        func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }
        func described(_ text: String) -> String {
            text.replacing("[", with: "(").replacing("]", with: ")").replacing(":", with: "\\:")
        }
        func spec(_ option: OptionSpec) -> String {
            var value = ""
            if let placeholder = option.value {
                switch valueKind(placeholder) {
                case .directory: value = ":\(placeholder.lowercased()):_files -/"
                case .file: value = ":\(placeholder.lowercased()):_files"
                case .other: value = ":\(placeholder.lowercased()): "
                }
            }
            let help = "[" + described(option.help) + "]" + value
            guard let short = option.short else { return quoted("--\(option.name)" + help) }
            return quoted("(-\(short) --\(option.name))") + "{-\(short),--\(option.name)}" + quoted(help)
        }
        var script = [
            "#compdef mapgate",
            "# zsh completion for mapgate \(BuildInfo.version), made by `mapgate help completions zsh`",
            "_mapgate_regions() { local -a ids; ids=(${(f)\"$(\(regionIDs))\"}); compadd -a ids; }",
            "_mapgate_offered() { local -a ids; ids=(${(f)\"$(\(offeredIDs))\"}); compadd -a ids; }",
            "_mapgate() {",
            "  local curcontext=\"$curcontext\" state line",
            "  local -a global commands",
            "  global=(" + ParsedArguments.globalOptions.map(spec).joined(separator: " ") + ")",
            "  commands=(" + completed.map { quoted($0.name + ":" + described($0.abstract)) }.joined(separator: " ")
                + " " + quoted(["help", described(Self.helpAbstract)].joined(separator: ":")) + ")",
            "  _arguments -C $global '1:command:->command' '*::argument:->argument'",
            "  case $state in",
            "    command) _describe -t commands 'mapgate command' commands ;;",
            "    argument)",
            "      case $words[1] in",
            "        help) _arguments '1:command:(\(completed.map { $0.name }.joined(separator: " ")))' ;;",
        ]
        for command in completed {
            var specs = ["$global"] + command.options.map(spec)
            let positional = positionals(of: command)
            for (index, kind) in positional.kinds.enumerated() {
                let action = kind == .region ? "_mapgate_regions" : kind == .offeredRegion ? "_mapgate_offered" : kind == .directory ? "_files -/" : " "
                let position = positional.lastRepeats && index == positional.kinds.count - 1 ? "*" : "\(index + 1)"
                specs.append(quoted(position + ":\(positional.names[index].lowercased()):\(action)"))
            }
            script.append("        \(command.name)) _arguments \(specs.joined(separator: " ")) ;;")
        }
        script += ["      esac ;;", "  esac", "}", "_mapgate \"$@\""]
        return script.joined(separator: "\n")
    }

    // MARK: fish

    private static func fish() -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
        }
        func line(_ option: OptionSpec, condition: String?) -> String {
            var parts = ["complete -c mapgate"]
            if let condition { parts.append("-n " + quoted(condition)) }
            if let short = option.short { parts.append("-s \(short)") }
            parts.append("-l \(option.name)")
            if let placeholder = option.value {
                switch valueKind(placeholder) {
                case .directory: parts.append("-r -f -a '(__fish_complete_directories)'")
                case .file: parts.append("-r -F")
                case .other: parts.append("-r -f")
                }
            }
            parts.append("-d " + quoted(option.help))
            return parts.joined(separator: " ")
        }
        let names = completed.map { $0.name }.joined(separator: " ")
        var script = [
            "# fish completion for mapgate \(BuildInfo.version), made by `mapgate help completions fish`",
            "complete -c mapgate -f",
            "function __mapgate_regions; " + regionIDs.replacing(#"sed -n 's/.*"id":"\([^"]*\)".*/\1/p'"#, with: #"string replace -rf '.*"id":"([^"]*)".*' '$1'"#) + "; end",
            "function __mapgate_offered; begin; mapgate list --json; mapgate catalog --saved --json; end 2>/dev/null | "
                + #"string replace -rf '.*"id":"([^"]*)".*' '$1' | sort -u; end"#,
        ]
        for command in completed {
            script.append("complete -c mapgate -n " + quoted("not __fish_seen_subcommand_from \(names) help") + " -a \(command.name) -d " + quoted(command.abstract))
        }
        script.append("complete -c mapgate -n " + quoted("not __fish_seen_subcommand_from \(names) help") + " -a help -d " + quoted(Self.helpAbstract))
        script.append("complete -c mapgate -n '__fish_seen_subcommand_from help' -a " + quoted(names))
        script += ParsedArguments.globalOptions.map { line($0, condition: nil) }
        for command in completed {
            script += command.options.map { line($0, condition: "__fish_seen_subcommand_from \(command.name)") }
            // Which positional the cursor is on: the words typed so far that are not options
            // (an option's value counts too: close enough for completion).
            let positional = positionals(of: command)
            for (index, kind) in positional.kinds.enumerated() where kind != .other {
                var condition = "__fish_seen_subcommand_from \(command.name)"
                if !(positional.lastRepeats && index == positional.kinds.count - 1) {
                    condition += "; and test (count (string match -v -- '-*' (commandline -opc))) -eq \(index + 2)"
                }
                let values = kind == .region ? "(__mapgate_regions)" : kind == .offeredRegion ? "(__mapgate_offered)" : "(__fish_complete_directories)"
                script.append("complete -c mapgate -n " + quoted(condition) + " -a '\(values)'")
            }
        }
        return script.joined(separator: "\n")
    }
}
