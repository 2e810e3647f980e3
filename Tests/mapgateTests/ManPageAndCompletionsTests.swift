import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// `mapgate help man` and `mapgate help completions SHELL` (what `scripts/package` ships) against
/// what `mapgate --help` and `mapgate CMD --help` print: every command and every option appears,
/// the man page renders without a warning, the scripts parse.
@Suite struct ManPageAndCompletionsTests {
    let work: TemporaryDirectory
    let mapgate: MapGateBinary

    init() throws {
        work = try TemporaryDirectory()
        mapgate = try MapGateBinary(workDirectory: work.path)
    }

    /// The commands `mapgate --help` lists, each with the options its `--help` lists (long names
    /// without dashes, short letters), the global options included.
    func helpTables() throws -> [(command: String, options: [String], shorts: [String])] {
        let root = try mapgate.runBare(["--help"])
        try #require(root.status == 0)
        let lines = root.stdout.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "commands:"))
        let commands = lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { $0.split(separator: " ").first.map(String.init) }
        try #require(commands.count >= 12, "commands parsed from --help: \(commands)")
        return try commands.map { command in
            let help = try mapgate.runBare([command, "--help"])
            try #require(help.status == 0, "\(command) --help: \(help.stderr)")
            let optionLines = help.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("  -") }
            let options = optionLines.compactMap { $0.firstMatch(of: /--([a-z][a-z-]*)/).map { String($0.1) } }
            let shorts = optionLines.compactMap { $0.firstMatch(of: /^  -([a-zA-Z]),/).map { String($0.1) } }
            try #require(options.count == optionLines.count, "options parsed from \(command) --help")
            #expect(options.contains("data-dir") && options.contains("help"), "\(command) --help lists the global options")
            return (command, options, shorts)
        }
    }

    @Test func manPageHasEveryCommandAndOptionOfHelp() throws {
        let result = try mapgate.runBare(["help", "man"])
        #expect(result.status == 0)
        let roff = result.stdout
        #expect(roff.hasPrefix(".TH MAPGATE 1 "))
        for (command, options, shorts) in try helpTables() {
            #expect(roff.contains(".SS \"\(command.replacingOccurrences(of: "-", with: "\\-"))\""), "command \(command) missing from the man page")
            for option in options {
                #expect(roff.contains("\\fB\\-\\-\(option.replacingOccurrences(of: "-", with: "\\-"))\\fR"), "\(command) --\(option) missing from the man page")
            }
            for short in shorts {
                #expect(roff.contains("\\fB\\-\(short)\\fR"), "\(command) -\(short) missing from the man page")
            }
        }
        for code in [0, 1, 64, 65, 69, 74, 77] {
            #expect(roff.contains(".TP\n\\fB\(code)\\fR\n"), "exit code \(code) missing from the man page")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "needs groff (groff-base, installed by scripts/install-deps)"))
    func manPageRendersWithoutWarnings() throws {
        let page = work.path + "/mapgate.1"
        try Data(try mapgate.runBare(["help", "man"]).stdoutData).write(to: URL(fileURLWithPath: page))
        // UTF-8, and ASCII as `man` renders in the C locale (found by an attack: "…" was dropped
        // with a warning there).
        for device in ["-Tutf8", "-Tascii"] {
            let rendered = try runProcess("/usr/bin/groff", ["-man", device, "-ww", "-P-bu", page])
            #expect(rendered.status == 0)
            #expect(rendered.stderr.isEmpty, "groff \(device) warned: \(rendered.stderr)")
            #expect(rendered.stdout.contains("EXIT STATUS"))
        }
    }

    /// The Chinese and Japanese pages put no space beside full-width punctuation where a line of
    /// the translation broke (found by an attack: `表示します。 --json`, `maxzoom、 installedVersion`).
    @Test(
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "needs groff (groff-base, installed by scripts/install-deps)"),
        arguments: ["ja_JP.UTF-8", "zh_CN.UTF-8", "zh_TW.UTF-8"])
    func cjkPagesPutNoSpaceBesideFullWidthPunctuation(_ locale: String) throws {
        let page = work.path + "/mapgate-\(locale).1"
        let roff = try mapgate.run(["help", "man"], environment: ["LANG": locale, "LANGUAGE": "", "LC_ALL": ""]).stdout
        #expect(roff.contains("\\[u3002]"), "not translated: \(roff.prefix(300))")
        try Data(roff.utf8).write(to: URL(fileURLWithPath: page))
        let rendered = try runProcess("/usr/bin/groff", ["-man", "-Tutf8", "-P-cbou", "-rLL=200n", page])
        let spaced = rendered.stdout.split(separator: "\n").filter { $0.contains(/[。，、：；）」] +[!-~]/) }
        #expect(spaced.isEmpty, "\(spaced.prefix(5))")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionsHaveEveryCommandAndOptionOfHelp(shell: String) throws {
        let result = try mapgate.runBare(["help", "completions", shell])
        #expect(result.status == 0)
        let script = result.stdout
        #expect(script.contains("mapgate list --json"), "\(shell) completes region ids from mapgate list --json")
        // All but system-service, which systemd runs (`mapgate sy<Tab>` stays `sync`).
        for (command, options, shorts) in try helpTables() where command != "system-service" {
            #expect(script.contains(command), "command \(command) missing from the \(shell) completions")
            for option in options {
                let form = shell == "fish" ? "-l \(option)" : "--\(option)"
                #expect(script.contains(form), "\(command) --\(option) missing from the \(shell) completions")
            }
            for short in shorts {
                let form = shell == "fish" ? "-s \(short)" : "-\(short)"
                #expect(script.contains(form), "\(command) -\(short) missing from the \(shell) completions")
            }
        }
        let file = work.path + "/completion." + shell
        try result.stdoutData.write(to: URL(fileURLWithPath: file))
        let program = "/usr/bin/" + shell
        guard FileManager.default.isExecutableFile(atPath: program) else {
            Issue.record("\(program) is missing: the \(shell) script's syntax was not checked (apt-get install \(shell))")
            return
        }
        let syntax = try runProcess(program, ["-n", file])
        #expect(syntax.status == 0, "\(shell) -n: \(syntax.stderr)")
    }

    /// What `mapgate help completions bash` completes for `words` (the cursor on the last one),
    /// with `path` first on PATH (where a test puts its own `mapgate`).
    func bashComplete(_ words: [String], path: String? = nil) throws -> String {
        let file = work.path + "/completion.bash"
        if !FileManager.default.fileExists(atPath: file) {
            try mapgate.runBare(["help", "completions", "bash"]).stdoutData.write(to: URL(fileURLWithPath: file))
        }
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let prefix = path.map { "export PATH='\($0)':$PATH; " } ?? ""
        let script = prefix + "source '\(file)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _mapgate; echo \"${COMPREPLY[*]}\""
        let result = try runProcess("/bin/bash", ["-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func bashCompletesCommandsAndOptions() throws {
        #expect(try bashComplete(["mapgate", "sy"]) == "sync")
        #expect(try bashComplete(["mapgate", "--json", "ver"]) == "verify")
        #expect(try bashComplete(["mapgate", "serve", "--max"]) == "--max-connections")
        #expect(try bashComplete(["mapgate", "tile", "-"]).contains("--output"))
        #expect(try bashComplete(["mapgate", "help", "pub"]) == "publish")
    }

    /// Issue 27: `sync` completes the ids of the catalog the last sync kept, not only the
    /// installed ones; `open` only the installed ones. Offline: `catalog --saved`.
    @Test func bashCompletesSyncFromTheSavedCatalog() throws {
        let workspace = try CLIWorkspace()
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        let binary = workspace.mapgate
        try binary.configure(["catalogURL": workspace.catalogURL])
        #expect(try binary.run(["sync", "geo"]).status == 0)
        workspace.origin.stop()
        let saved = try binary.run(["catalog", "--saved"])
        #expect(saved.status == 0 && saved.stdout.contains("saved by the last sync") && saved.stdout.contains("plain"), "\(saved.stdout)\(saved.stderr)")
        // `mapgate` on PATH is the test's binary with its data directory and configuration.
        let bin = workspace.work.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let exports = binary.baseEnvironment.map { "export \($0.key)='\($0.value)'" }.joined(separator: "\n")
        try "#!/bin/sh\n\(exports)\nexec '\(binary.path)' \"$@\" --config '\(binary.configPath)' --data-dir '\(binary.dataDirectory)'\n"
            .write(toFile: bin + "/mapgate", atomically: true, encoding: .utf8)
        #expect(chmod(bin + "/mapgate", 0o755) == 0)
        #expect(try bashComplete(["mapgate", "sync", ""], path: bin) == "geo plain")
        #expect(try bashComplete(["mapgate", "sync", "p"], path: bin) == "plain")
        #expect(try bashComplete(["mapgate", "open", ""], path: bin) == "geo")
    }

    @Test func unknownShellIsAUsageError() throws {
        let result = try mapgate.runBare(["help", "completions", "tcsh"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("no completions for shell 'tcsh'"))
    }
}
