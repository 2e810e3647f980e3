import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// mapgate on a terminal: the prompt's question and the progress bar, run under script(1),
/// which gives the binary a pseudo-terminal.
@Suite struct TerminalTests {
    let workspace: CLIWorkspace
    var work: TemporaryDirectory { workspace.work }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
    }

    /// Runs mapgate on a pseudo-terminal at `time`, typing `input`; returns what the terminal showed.
    func onTerminal(_ arguments: [String], at time: String, input: String = "") throws -> ProcessResult {
        let command = (["/usr/bin/faketime", "'\(time)'", mapgate.path] + arguments + ["--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
            .joined(separator: " ")
        // PATH without xdg-open, so "update now" prints the store URL instead of opening it.
        return try runProcess(
            "/usr/bin/script", ["-qec", command, "/dev/null"],
            environment: mapgate.baseEnvironment.merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 }.filter { $0.key != "NO_COLOR" },
            stdin: input)
    }

    /// On a terminal 40 columns wide (a phone's SSH client) `list` and `catalog` show each region
    /// as a block of `HEADING  value` lines that fit (found by an attack: the table's rows wrapped
    /// into a jumble); on a wide terminal, and on a pipe, the table stays.
    @Test func aTableNarrowerThanTheTerminalIsShownAsBlocks() throws {
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        func shown(_ command: String, columns: Int) throws -> [String] {
            let line = "stty cols \(columns); \(mapgate.path) \(command) --config \(mapgate.configPath) --data-dir \(mapgate.dataDirectory)"
            let result = try runProcess("/usr/bin/script", ["-qec", line, "/dev/null"], environment: mapgate.baseEnvironment.merging(["TERM": "xterm"]) { $1 })
            #expect(result.status == 0, "\(result.stdout)")
            return result.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        for command in ["list", "catalog"] {
            let narrow = try shown(command, columns: 40)
            // (The catalog's first line is prose: the terminal wraps it as any.)
            #expect(narrow.filter { $0.hasPrefix("  ") }.count >= 6 && narrow.filter { $0.hasPrefix("  ") }.allSatisfy { TerminalText.width($0) <= 40 }, "\(narrow)")
            #expect(narrow.contains("geo"), "\(narrow)")
            #expect(narrow.contains { $0.hasPrefix("  VERSION") && $0.hasSuffix("  1") }, "\(narrow)")
            let wide = try shown(command, columns: 250)
            #expect(wide.contains { $0.hasPrefix("ID") && $0.contains("VERSION") }, "\(wide)")
        }
        let piped = try mapgate.run(["list"], environment: ["COLUMNS": "40"])
        #expect(piped.stdout.hasPrefix("ID"), "\(piped.stdout)")
    }

    /// On a terminal, the help is fitted to its width (found by an attack: at 40 columns, and
    /// even at 80, its lines ran past the edge, the terminal cut words in two, and a Chinese or
    /// Japanese line could begin with "。"): running text wrapped by paragraph, an option's meaning
    /// under its name. On a pipe each line is as written, for `grep` and for the manual.
    @Test func theHelpFitsTheTerminalInEveryLanguage() throws {
        func shown(_ arguments: String, columns: Int, locale: String) throws -> [String] {
            let line = "stty cols \(columns); \(mapgate.path) \(arguments)"
            let environment = mapgate.baseEnvironment.merging(["TERM": "xterm", "LANG": locale, "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""]) { $1 }
            let result = try runProcess("/usr/bin/script", ["-qec", line, "/dev/null"], environment: environment)
            #expect(result.status == 0, "\(result.stdout)")
            return result.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        for locale in ["C.UTF-8", "ja_JP.UTF-8", "zh_CN.UTF-8", "zh_TW.UTF-8", "ko_KR.UTF-8"] {
            for arguments in ["--help", "sync --help", "serve --help", "publish --help"] {
                for columns in [40, 80] {
                    let lines = try shown(arguments, columns: columns, locale: locale)
                    let over = lines.filter { TerminalText.width($0) > columns }
                    #expect(over.isEmpty, "\(locale) \(arguments) at \(columns): \(over)")
                    #expect(!lines.contains { $0.first.map { "。、，）：".contains($0) } == true }, "\(locale) \(arguments) at \(columns)")
                    #expect(lines.count > 20, "\(lines)")
                }
            }
        }
        // Words are whole, and the paragraphs stay apart.
        let english = try shown("sync --help", columns: 40, locale: "C.UTF-8")
        #expect(english.contains("replace the installed file atomically."), "\(english)")
        #expect(english.contains("  --from MIRROR") && english.contains { $0.hasPrefix("      sync from a mirror") }, "\(english)")
        let paragraph = try #require(english.firstIndex { $0.hasPrefix("With --from,") })
        #expect(english[paragraph - 1].isEmpty, "\(english)")
        let piped = try mapgate.run(["sync", "--help"])
        #expect(piped.stdout.contains("  --from MIRROR       sync from a mirror: a folder, or http://HOST:PORT of a 'serve --share'"), "\(piped.stdout)")
    }

    @Test func colourOnATerminalUnlessNoColorIsSet() throws {
        try mapgate.configure([:])
        let command = "\(mapgate.path) status --config \(mapgate.configPath) --data-dir \(mapgate.dataDirectory)"
        let environment = environmentWith(mapgate.baseEnvironment.merging(["TERM": "xterm"]) { $1 }).filter { $0.key != "NO_COLOR" }
        let coloured = try runProcess("/usr/bin/env", ["-i"] + environment.map { "\($0.key)=\($0.value)" } + ["/usr/bin/script", "-qec", command, "/dev/null"])
        #expect(coloured.stdout.contains("\u{1B}[32mnot checked yet"), "\(coloured.stdout)")
        let plain = try runProcess("/usr/bin/script", ["-qec", command, "/dev/null"], environment: mapgate.baseEnvironment.merging(["TERM": "xterm"]) { $1 })
        #expect(plain.stdout.contains("not checked yet"))
        #expect(!plain.stdout.contains("\u{1B}["))
    }

    @Test func updateNowOpensTheStoreAndSkipsTheCommand() throws {
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        // Answered once the question is there: keys typed before it are dropped (GateGuard).
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", work.file("tile.png")], at: "2027-02-05 00:00:00", steps: [.init(waitFor: "[l]ater:", send: "u\r")])
        #expect(result.screen.contains("5 uses left"), "\(result.screen)")
        #expect(result.screen.contains("Update now or later? [u]pdate now / [l]ater:"))
        #expect(result.screen.contains("Open https://apps.example/mapgate to update."), "\(result.screen)")
        #expect(result.status == 0)
        #expect(!FileManager.default.fileExists(atPath: work.file("tile.png")), "the command must not run")
        // Nothing was delivered: the use reserved when the prompt was shown is given back.
        let status = try MapGateBinary.json(try mapgate.run(["status", "--json"], at: "2027-02-05 00:01:00").stdout)
        #expect(status["promptsShown"] as? Int == 0)
    }

    @Test func laterRunsTheCommand() throws {
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", work.file("tile.png")], at: "2027-02-05 00:00:00", steps: [.init(waitFor: "[l]ater:", send: "l\r")])
        #expect(result.screen.contains("Update now or later?"))
        #expect(result.status == 0, "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: work.file("tile.png")))
    }

    @Test func tileRefusesToWriteBinaryToATerminal() throws {
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
        let refused = try onTerminal(["tile", "geo", "0", "0", "0"], at: "2027-01-02 00:00:00")
        #expect(refused.status == 64)
        #expect(refused.stdout.contains("use -o FILE or redirect"), "\(refused.stdout)")
        #expect(!refused.stdout.contains("PNG"))
        let forced = try onTerminal(["tile", "geo", "0", "0", "0", "-o", "-"], at: "2027-01-02 00:00:00")
        #expect(forced.status == 0)
        #expect(forced.stdout.contains("PNG"))
    }

    @Test func syncDrawsAProgressBarOnATerminalOnly() throws {
        let terminal = try onTerminal(["sync", "geo"], at: "2027-01-01 00:00:00")
        #expect(terminal.status == 0)
        #expect(terminal.stdout.contains("geo [#"), "no bar: \(terminal.stdout)")
        #expect(terminal.stdout.contains("100%"))
        #expect(terminal.stdout.contains("\u{1B}["))  // colour and line clearing on a terminal
        try FileManager.default.removeItem(atPath: mapgate.dataDirectory)
        let piped = try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00")
        #expect(!piped.stderr.contains("[#"))
        #expect(!piped.stdout.contains("\u{1B}["))
        #expect(piped.stdout.contains("geo 1: installed"))
    }
}
