import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// The command table and the one place that maps errors to output and exit codes.
enum MapGateCLI {
    static let commands: [any Command.Type] = [
        CheckCommand.self, StatusCommand.self, CatalogCommand.self, SyncCommand.self, ListCommand.self,
        RemoveCommand.self, VerifyCommand.self, OpenCommand.self, ServeCommand.self, MirrorCommand.self, TileCommand.self, ExportCommand.self, DemoCommand.self, PublishCommand.self,
        SystemServiceCommand.self,
    ]

    /// Runs mapgate with `raw` (this process's arguments as given: ``processArguments()``).
    static func main(_ raw: [[UInt8]], environment: [String: String]) -> Int32 {
        let code = run(raw, environment: environment)
        // Output that could not be written (a full disk, `> /dev/full`) is no success (found by an
        // attack: `status --json > FILE` on a full disk exited 0 with the file empty). A closed
        // pipe (`| head`) is not a failure: the reader had what it wanted.
        guard code == ExitCode.success, let reason = StandardStreams.outputFailure else { return code }
        let error = OutputError(path: L.localized("standard output"), reason: reason, kind: .io)
        Console(quiet: false, json: false, environment: environment).error(error.errorDescription ?? reason)
        return ExitCode.forError(error)
    }

    /// This process's arguments, as bytes: Swift's, or when it has none, the kernel's
    /// (`/proc/self/cmdline`; found by an attack: with libfaketime preloaded by hand, Swift saw no
    /// arguments at all and the run crashed at start).
    static func processArguments() -> [[UInt8]] {
        if CommandLine.argc > 0 {
            return (0..<Int(CommandLine.argc)).map { position in
                CommandLine.unsafeArgv[position].map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
            }
        }
        guard let line = FileManager.default.contents(atPath: "/proc/self/cmdline"), !line.isEmpty else { return [] }
        return line.split(separator: 0, omittingEmptySubsequences: false).dropLast(line.last == 0 ? 1 : 0).map { Array($0) }
    }

    /// The position of the first argument (after the program's name) that is not UTF-8 (read as
    /// text it would have U+FFFD in place of its bytes: found by an attack, `mirror
    /// $'Karten\xfc'` wrote into another folder, `Karten\u{FFFD}`); nil when all are.
    static func undecodableArgument(_ raw: [[UInt8]]) -> Int? {
        raw.indices.dropFirst().first { String(validating: raw[$0], as: UTF8.self) == nil }
    }

    /// An argument that is not UTF-8, as the user can recognise it: read in the locale's character
    /// set where that is another (a name typed in EUC-JP shows as typed), else each byte that is
    /// not part of a UTF-8 character as `\xNN` (found by an attack: `日本.pmtiles` typed in EUC-JP
    /// was named `����.pmtiles`, which told the user nothing).
    static func shown(_ bytes: [UInt8]) -> String {
        if let codeset = LocaleEncoding.foreignCodeset { return TerminalInput.text(bytes, codeset: codeset) }
        var text = ""
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            if length > 0, index + length <= bytes.count, let character = String(validating: bytes[index..<index + length], as: UTF8.self) {
                text += character
                index += length
            } else {
                text += "\\x" + (lead < 0x10 ? "0" : "") + String(lead, radix: 16, uppercase: true)
                index += 1
            }
        }
        return text
    }

    private static func run(_ raw: [[UInt8]], environment: [String: String]) -> Int32 {
        let argv = raw.map { String(decoding: $0, as: UTF8.self) }
        // The user's language for what people read; none for what scripts read (--json).
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? argv.first ?? ""
        Localization.catalogFolder = Localization.folder(forExecutable: executable)
        LocaleEncoding.setUp()
        if !argv.contains("--json") { Localization.setUp(folder: Localization.catalogFolder) }
        let arguments: ParsedArguments
        do {
            if let position = undecodableArgument(raw) {
                throw UsageError(
                    message: L.localized(
                        "argument %1$s (%2$s) is not UTF-8, and would be read as another name: give mapgate file and folder names in UTF-8 (rename it, or make a link with a UTF-8 name)",
                        "\(position)", TerminalText.inline(shown(raw[position]))),
                    usage: "mapgate --help")
            }
            arguments = try parse(Array(argv.dropFirst()))
            // `--json` given as an option's value (`-o --json`) is no JSON run: the user's
            // language after all (found by an attack: such a run spoke English).
            if argv.contains("--json"), !arguments.has("json") { Localization.setUp(folder: Localization.catalogFolder) }
        } catch let error as UsageError {
            return usageFailure(error, environment: environment, json: argv.contains("--json"))
        } catch {
            return ExitCode.failure
        }
        let context = Context(arguments: arguments, environment: environment)
        let console = context.console
        if arguments.isVersion {
            if context.json { console.json(VersionLine(version: BuildInfo.version)) } else { console.data("mapgate \(BuildInfo.version)") }
            return ExitCode.success
        }
        guard let name = arguments.command else {
            if arguments.isHelp {
                console.data(Help.root(width: TerminalText.columns(of: STDOUT_FILENO)))
                return ExitCode.success
            }
            UnixFile.standardError.write(Data(LocaleEncoding.bytes(Help.root(width: TerminalText.columns(of: STDERR_FILENO)) + "\n")))
            return ExitCode.usage
        }
        if name == "help" {
            let topic = arguments.positional.first
            // Not listed in --help: what scripts/package builds the man page and completions from.
            if topic == "man" {
                console.data(Help.manPage())
                return ExitCode.success
            }
            if topic == "completions" {
                let shell = arguments.positional.dropFirst().first ?? ""
                guard let script = Completions.script(for: shell) else {
                    let usage = "mapgate help completions " + Completions.shells.joined(separator: "|")
                    return usageFailure(UsageError(message: L.localized("no completions for shell '%1$s'", "\(shell)"), usage: usage), environment: environment, json: context.json)
                }
                console.data(script)
                return ExitCode.success
            }
            // Typed as a command is (full-width letters, capitals: found by an attack, `help ｓｙｎｃ`
            // was no topic while `ｓｙｎｃ --help` was the command's help).
            let folded = topic.map { FullWidth.ascii($0).lowercased() }
            if let folded, let command = commands.first(where: { $0.name == folded }) {
                console.data(Help.command(command, width: TerminalText.columns(of: STDOUT_FILENO)))
                return ExitCode.success
            }
            if let topic {
                let names = commands.map { $0.name }
                let message =
                    Suggestion.closest(to: topic, among: names).map { L.localized("no help topic '%1$s'; did you mean '%2$s'?", "\(topic)", $0) }
                    ?? L.localized("no help topic '%1$s' (topics: %2$s)", "\(topic)", "\(names.joined(separator: ", "))")
                let usage = UsageError(message: message + ParsedArguments.fullWidthSpaceHint(topic), usage: "mapgate help [COMMAND]")
                return usageFailure(usage, environment: environment, json: context.json)
            }
            console.data(Help.root(width: TerminalText.columns(of: STDOUT_FILENO)))
            return ExitCode.success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            var message = L.localized("unknown command '%1$s'", "\(name)")
            let names: [String] = commands.map { $0.name }
            if let meant = Suggestion.closest(to: name, among: names) {
                message = L.localized("unknown command '%1$s'; did you mean '%2$s'?", "\(name)", meant)
            }
            message += ParsedArguments.fullWidthSpaceHint(name)
            return usageFailure(UsageError(message: message, usage: "mapgate --help"), environment: environment, json: context.json)
        }
        if arguments.isHelp {
            console.data(Help.command(command, width: TerminalText.columns(of: STDOUT_FILENO)))
            return ExitCode.success
        }
        do {
            let instance = try command.init(parsing: arguments)
            // Every command reads and checks the publisher's policy; in system mode the machine's
            // service runs it (SystemRelay), with its own configuration. Here, the user's.
            _ = try context.gateSettings()
            if let code = try SystemRelay.run(arguments, argv: argv, context: context) { return code }
            _ = try context.configuration()
            return try instance.run(context)
        } catch let error as UsageError {
            return usageFailure(error, environment: environment, json: context.json)
        } catch {
            let code = ExitCode.forError(error)
            console.error(describe(error))
            if context.json { console.json(ErrorLine(error: describe(error), exitCode: code)) }
            return code
        }
    }

    /// The command line (without the program's name) as every command reads it: also how the
    /// system service reads a request's, so that both see the same command and options.
    static func parse(_ arguments: [String]) throws -> ParsedArguments {
        try ParsedArguments.parse(arguments) { name in commands.first { $0.name == name }?.options }
    }

    /// `--version --json`.
    struct VersionLine: Encodable {
        var version: String
    }

    /// The `--json` line of a command that failed as a whole (docs/commands.md).
    struct ErrorLine: Encodable {
        var error: String
        var exitCode: Int32
    }

    static func describe(_ error: any Error) -> String {
        errorMessage(error)
    }

    /// A usage error: the message and the usage on stderr (and, with `--json`, the error object
    /// on stdout), exit 64.
    private static func usageFailure(_ error: UsageError, environment: [String: String], json: Bool) -> Int32 {
        let console = Console(quiet: false, json: json, environment: environment)
        console.error(error.message)
        UnixFile.standardError.write(Data(LocaleEncoding.bytes(L.localized("usage: %1$s", error.usage) + "\n")))
        if json { console.json(ErrorLine(error: error.message, exitCode: ExitCode.usage)) }
        return ExitCode.usage
    }
}
