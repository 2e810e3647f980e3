import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The update prompt answered in the user's own words (issue 37, part 1), on a real
/// pseudo-terminal in each language mapgate speaks: the labels the prompt shows, yes and no, the
/// keys and numbers, full-width letters; an answer not understood asks again; no answer runs
/// nothing and counts nothing (exit 75).
@Suite struct PromptAnswerTerminalTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    let during = "2027-02-05 00:00:00"

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        #expect(try mapgate.run(["sync", "geo"], at: "2027-01-01 00:00:00").status == 0)
    }

    func promptsShown() throws -> Int {
        let status = try mapgate.run(["status", "--json"], at: during)
        return try #require(try MapGateBinary.json(status.stdout)["promptsShown"] as? Int, "\(status.stdout)")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var locale: String
        var question: String
        var answer: String
        var updatesNow: Bool
        var testDescription: String { "\(locale): \(answer)" }
    }

    static let cases: [Case] = [
        Case(locale: "zh_TW.UTF-8", question: "是否更新？", answer: "立即更新", updatesNow: true),
        Case(locale: "zh_TW.UTF-8", question: "是否更新？", answer: "是", updatesNow: true),
        Case(locale: "zh_TW.UTF-8", question: "是否更新？", answer: "ｕ", updatesNow: true),
        Case(locale: "zh_TW.UTF-8", question: "是否更新？", answer: "稍後更新", updatesNow: false),
        Case(locale: "zh_TW.UTF-8", question: "是否更新？", answer: "否", updatesNow: false),
        Case(locale: "zh_CN.UTF-8", question: "是否更新？", answer: "稍后更新", updatesNow: false),
        Case(locale: "zh_CN.UTF-8", question: "是否更新？", answer: "好", updatesNow: true),
        Case(locale: "ja_JP.UTF-8", question: "アップデートしますか？", answer: "はい", updatesNow: true),
        Case(locale: "ja_JP.UTF-8", question: "アップデートしますか？", answer: "今すぐアップデート", updatesNow: true),
        Case(locale: "ja_JP.UTF-8", question: "アップデートしますか？", answer: "後で", updatesNow: false),
        Case(locale: "ja_JP.UTF-8", question: "アップデートしますか？", answer: "２", updatesNow: false),
        Case(locale: "ko_KR.UTF-8", question: "업데이트할까요?", answer: "예", updatesNow: true),
        Case(locale: "ko_KR.UTF-8", question: "업데이트할까요?", answer: "지금 업데이트", updatesNow: true),
        Case(locale: "ko_KR.UTF-8", question: "업데이트할까요?", answer: "나중에", updatesNow: false),
        // The l key with the Korean input method on, and the u key with the Japanese one.
        Case(locale: "ko_KR.UTF-8", question: "업데이트할까요?", answer: "ㅣ", updatesNow: false),
        Case(locale: "ja_JP.UTF-8", question: "アップデートしますか？", answer: "う", updatesNow: true),
        Case(locale: "C.UTF-8", question: "Update now or later?", answer: "YES", updatesNow: true),
        Case(locale: "C.UTF-8", question: "Update now or later?", answer: "1", updatesNow: true),
        Case(locale: "C.UTF-8", question: "Update now or later?", answer: "later", updatesNow: false),
    ]

    /// Each answer does what it says, in the user's language: "update now" opens the store and
    /// runs nothing (its use given back), "later" runs the command (the use kept).
    @Test(arguments: cases)
    func anAnswerInTheUsersWordsIsUnderstood(_ item: Case) throws {
        let output = workspace.work.file("tile-\(abs(item.answer.hashValue)).png")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["LANG": item.locale, "LANGUAGE": ""],
            steps: [.init(waitFor: item.question, send: item.answer + "\r")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.status == 0, "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output) == !item.updatesNow, "\(result.screen)")
        #expect(try promptsShown() == before + (item.updatesNow ? 0 : 1), "\(result.screen)")
        if item.updatesNow { #expect(result.screen.contains("https://apps.example/mapgate"), "\(result.screen)") }
    }

    /// On a terminal 40 columns wide (a phone's SSH client) the prompt's lines are fitted to it
    /// in every language, as the help is (left by the attack on narrow terminals: the terminal
    /// cut the prompt's words in two, and Japanese lines could begin with "。").
    @Test(arguments: ["C.UTF-8", "ja_JP.UTF-8", "zh_CN.UTF-8", "ko_KR.UTF-8"])
    func thePromptFitsANarrowTerminal(_ locale: String) throws {
        let question = try #require(Self.cases.first { $0.locale == locale }?.question)
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", workspace.work.file("narrow-\(locale).png")], at: during,
            environment: ["LANG": locale, "LANGUAGE": "", "NO_COLOR": "1"], prefix: ["/bin/sh", "-c", "stty cols 40; exec \"$@\"", "sh"],
            steps: [.init(waitFor: question, send: "l\r")])
        #expect(result.status == 0, "\(result.screen)")
        let lines = result.screen.replacingOccurrences(of: "\r", with: "").split(separator: "\n").map(String.init)
        let prompt = lines.prefix { !$0.contains(question) }
        #expect(prompt.count >= 3, "\(lines)")
        // A URL has no place to break: the terminal wraps it, whole for copying.
        let over = prompt.filter { TerminalText.width($0) > 40 && !$0.contains("://") }
        #expect(over.isEmpty, "\(locale): \(over)")
        #expect(!prompt.contains { $0.first.map { "。、，）：".contains($0) } == true }, "\(locale): \(prompt)")
    }

    /// In a locale of another character set (`ja_JP.eucJP`, which mapgate answers in English),
    /// an answer typed in it is read in it (found by an attack: はい in EUC-JP was not understood,
    /// asked again, and the run gave up).
    @Test(arguments: [("後で", false), ("はい", true)])
    func anAnswerTypedInTheLocalesCharacterSetIsUnderstood(_ answer: String, _ updatesNow: Bool) throws {
        let locales = try runProcess("/usr/bin/locale", ["-a"]).stdout.lowercased()
        try #require(locales.contains("ja_jp.eucjp"), "ja_JP.eucJP is not made on this machine (scripts/install-deps makes it)")
        let output = workspace.work.file("euc-\(updatesNow).png")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["LANG": "ja_JP.eucJP", "LANGUAGE": "", "MAPGATE_PROMPT_TIMEOUT": "5"],
            steps: [.init(waitFor: "Update now or later?", send: answer + "\r", encoding: "euc_jp")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.status == 0, "\(result.screen)")
        #expect(!result.screen.contains("Please answer"), "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output) == !updatesNow, "\(result.screen)")
        #expect(try promptsShown() == before + (updatesNow ? 0 : 1), "\(result.screen)")
    }

    /// An answer not understood asks again, naming the choices; one understood then counts.
    @Test func anUnclearAnswerAsksAgain() throws {
        let output = workspace.work.file("again.png")
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during,
            steps: [.init(waitFor: "Update now or later?", send: "maybe\r"), .init(waitFor: "Please answer u (update now) or l (later)", send: "l\r")])
        #expect(result.status == 0, "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output))
    }

    /// The end of input (Ctrl-D) or three answers not understood: no answer. Nothing runs, no use
    /// is counted, exit 75, in every language.
    @Test(arguments: ["C.UTF-8", "zh_TW.UTF-8", "zh_CN.UTF-8", "ja_JP.UTF-8", "ko_KR.UTF-8"])
    func noAnswerRunsNothingAndCountsNothing(_ locale: String) throws {
        let output = workspace.work.file("none.png")
        let before = try promptsShown()
        let endOfInput = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["LANG": locale, "LANGUAGE": ""],
            steps: [.init(waitFor: "[u]", send: "\u{04}")])
        #expect(endOfInput.status == 75, "\(endOfInput.screen)")
        // The error starts a line of its own, not after the question the Ctrl-D left the cursor on.
        let label = ["zh_TW.UTF-8": "錯誤：", "zh_CN.UTF-8": "错误：", "ja_JP.UTF-8": "エラー：", "ko_KR.UTF-8": "오류:"][locale] ?? "error:"
        let questionLine = endOfInput.screen.split(whereSeparator: \.isNewline).last { $0.contains("[u]") } ?? ""
        #expect(!questionLine.contains(label), "\(endOfInput.screen)")
        #expect(endOfInput.screen.split(whereSeparator: \.isNewline).contains { $0.contains(label) && !$0.contains("[u]") }, "\(endOfInput.screen)")
        let unclear = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["LANG": locale, "LANGUAGE": ""],
            steps: [.init(waitFor: "[u]", send: "x\r"), .init(waitFor: "Ctrl-C", send: "??\r"), .init(waitFor: nil, send: "what\r")])
        #expect(unclear.status == 75, "\(unclear.screen)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try promptsShown() == before, "\(endOfInput.screen)\n\(unclear.screen)")
    }

    /// The whole line must come in time, not only its first key (found by an attack: a few
    /// characters and one Ctrl-D, which hands them over without a line end, held the question and
    /// the reserved use for as long as the terminal stayed open; in system mode, every user's
    /// last use). And characters ended by one Ctrl-D instead of Enter are no answer ("l", then
    /// Ctrl-D to back out, counted as "later"; then, found by an attack, it took a second Ctrl-D:
    /// after one the question waited with nothing said, and the next Enter answered "later").
    @Test func onlyALineEndedInTimeIsAnAnswer() throws {
        let output = workspace.work.file("held.png")
        let before = try promptsShown()
        let held = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["MAPGATE_PROMPT_TIMEOUT": "3"],
            steps: [.init(waitFor: "[u]", send: "zz")])
        #expect(!held.timedOut, "the question was held past its time: \(held.screen)")
        #expect(held.status == 75, "\(held.screen)")
        let backedOut = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during,
            steps: [.init(waitFor: "[u]", send: "l"), .init(waitFor: nil, send: "\u{04}", delay: 0.3), .init(waitFor: nil, send: "\r", delay: 2)])
        #expect(!backedOut.timedOut, "\(backedOut.screen)")
        #expect(backedOut.status == 75, "\(backedOut.screen)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try promptsShown() == before, "\(held.screen)\n\(backedOut.screen)")
    }

    /// stderr into a pipe or a file at a terminal (`2>&1 | tee log`, `2>log`): the question is
    /// still asked, on the terminal (found by an attack: the prompt went to the log and the use
    /// was counted as "later" unasked); into a file, the prompt's lines are shown there too. With
    /// no controlling terminal (`setsid`, as system mode's command runs), on standard input.
    /// Into a pipe too, whose reader may not show them (`| grep error`; found by an attack: a bare
    /// "Update now or later?" was left, and "l" spent the last use unawares).
    @Test(arguments: ["\"$@\" 2>&1 | cat", "\"$@\" 2>&1 | grep -i error", "\"$@\" 2>\"$0\"", "exec /usr/bin/setsid -w \"$@\" 2>\"$0\""])
    func theQuestionIsAskedWhenStderrGoesElsewhere(_ redirection: String) throws {
        let output = workspace.work.file("elsewhere.png")
        let log = workspace.work.file("stderr.log")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, prefix: ["/bin/sh", "-c", redirection, log],
            steps: [.init(waitFor: "Update now or later?", send: "u\r")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(!FileManager.default.fileExists(atPath: output), "the use was taken as later: \(result.screen)")
        #expect(try promptsShown() == before, "\(result.screen)")
        #expect(result.screen.contains("1.5.0"), "the prompt's lines are not on the terminal: \(result.screen)")
    }

    /// Not asked (standard input a pipe: a `while read` loop at a terminal) with stderr into a
    /// pipe whose reader shows nothing of it: the prompt's lines go to the terminal too (found by
    /// an attack: such a loop spent the last use with nothing on the screen). Not asked, the use is
    /// counted, as the lines say.
    @Test func aRunNotAskedShowsThePromptWhenStderrGoesIntoAPipe() throws {
        let output = workspace.work.file("loop.png")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during,
            prefix: ["/bin/sh", "-c", "printf 'x\\n' | \"$@\" 2>&1 | grep -i error; echo finished", "sh"],
            steps: [.init(waitFor: "finished", send: "")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.screen.contains("1.5.0"), "the prompt's lines are not on the terminal: \(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output))
        #expect(try promptsShown() == before + 1, "\(result.screen)")
    }

    /// A terminal in raw mode (`stty raw`: no line editing, no signals from keys) hands Ctrl-D and
    /// Ctrl-C over as bytes: no answer, nothing counted (found by an attack: they were read as
    /// part of the line, and the question held its use until its time ran out). Its Enter is a
    /// carriage return: `l` and Enter answer "later".
    @Test(arguments: ["\u{04}", "\u{03}", "l\r"])
    func ctrlDAndCtrlCOnARawTerminalAreNoAnswer(_ key: String) throws {
        let output = workspace.work.file("raw.png")
        let before = try promptsShown()
        let started = Date()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["MAPGATE_PROMPT_TIMEOUT": "20"],
            prefix: ["/bin/sh", "-c", "stty raw; \"$@\"; status=$?; stty sane; exit $status", "sh"],
            steps: [.init(waitFor: "[u]", send: key)])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(Date().timeIntervalSince(started) < 15, "the question waited for its time to run out")
        let later = key == "l\r"
        #expect(result.status == (later ? 0 : 75), "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output) == later)
        #expect(try promptsShown() == before + (later ? 1 : 0), "\(result.screen)")
    }

    /// A terminal stopped with Ctrl-S at the question, then Ctrl-D (found by an attack: the line
    /// end written after it blocked for good, with the use held): the use is given back while the
    /// terminal is still stopped (what mapgate then says waits for Ctrl-Q), and the run ends 75.
    @Test func aStoppedTerminalHoldsNothing() throws {
        let before = try promptsShown()
        let held = Locked<Int?>(nil)
        let mapgate = self.mapgate
        let during = self.during
        let looked = DispatchSemaphore(value: 0)
        let ended = Locked(false)
        // Looked at once the question is seen open (its use held), then again 2 s later, while
        // the terminal is still stopped (Ctrl-Q comes 6 s after Ctrl-D): never before the question,
        // where a slow machine would make the look prove nothing.
        Thread.detachNewThread {
            func usesHeld() -> Int? {
                (try? mapgate.run(["status", "--json"], at: during)).flatMap { try? MapGateBinary.json($0.stdout)["usesHeld"] as? Int }
            }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !ended.withLock({ $0 }), usesHeld() != 1 { Thread.sleep(forTimeInterval: 0.1) }
            Thread.sleep(forTimeInterval: 2)
            held.withLock { $0 = usesHeld() }
            looked.signal()
        }
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", workspace.work.file("xoff.png")], at: during,
            steps: [.init(waitFor: "[u]", send: "\u{13}"), .init(waitFor: nil, send: "\u{04}"), .init(waitFor: nil, send: "\u{11}", delay: 6)])
        ended.withLock { $0 = true }
        looked.wait()
        #expect(held.withLock { $0 } == 0, "the use was held while the terminal was stopped")
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.status == 75, "\(result.screen)")
        #expect(try promptsShown() == before)
    }

    /// "Update now" starts the opener and does not wait for it (found by an attack: a text
    /// browser that xdg-open ran at the terminal stopped on SIGTTIN, and mapgate waited for it
    /// with the use held); the store's address is printed either way.
    @Test func updateNowDoesNotWaitForTheBrowser() throws {
        let bin = workspace.work.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // A browser that never ends: it lets go of the terminal and of every descriptor the test's
        // driver gave it (so that the test sees mapgate end), says its process id, and waits on a
        // pipe nobody writes to (faketime, in its environment, would make a sleep return at once).
        let pidFile = workspace.work.file("browser.pid")
        try workspace.work.write(
            "bin/xdg-open",
            "#!/usr/bin/python3\nimport os\nos.dup2(os.open('/dev/null', os.O_RDONLY), 0)\nos.closerange(3, 4096)\nr, w = os.pipe()\nopen('\(pidFile)', 'w').write(str(os.getpid()))\nos.read(r, 1)\n")
        #expect(chmod(bin + "/xdg-open", 0o755) == 0)
        defer {
            if let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap({ Int32($0) }) { kill(pid, SIGKILL) }
        }
        let started = Date()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", workspace.work.file("browser.png")], at: during, prefix: ["/usr/bin/env", "PATH=\(bin):/usr/bin:/bin"],
            steps: [.init(waitFor: "Update now or later?", send: "u\r")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(Date().timeIntervalSince(started) < 30, "it waited for the browser")
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("to update."), "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: pidFile), "the browser was not started")
    }

    /// Ctrl-Z where no shell could continue mapgate (started straight on a terminal of its own, as
    /// `ssh -t host mapgate …` or `tmux new 'mapgate …'` start it) does nothing, as the kernel does
    /// with Ctrl-Z there (found by an attack: mapgate stopped itself for good, holding its use,
    /// and only `kill -9` ended it); the question is still there to answer.
    @Test func ctrlZWithNoShellToContinueDoesNothing() throws {
        let output = workspace.work.file("orphaned.png")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, environment: ["MAPGATE_PROMPT_TIMEOUT": "20"],
            steps: [.init(waitFor: "Update now or later?", send: "\u{1A}"), .init(waitFor: "^Z", send: "l\r")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.status == 0, "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: output), "\(result.screen)")
        #expect(try promptsShown() == before + 1, "\(result.screen)")
    }

    /// Keys typed before the question appears (found by an attack: `l` typed while a slow store
    /// lookup ran answered a question the user never saw, and a use was spent) are no answer:
    /// only what is typed after it is.
    @Test func keysTypedBeforeTheQuestionAreNoAnswer() throws {
        let output = workspace.work.file("typed-ahead.png")
        let before = try promptsShown()
        let result = try mapgate.runOnTerminal(
            ["tile", "geo", "0", "0", "0", "-o", output], at: during, prefix: ["/bin/sh", "-c", "sleep 1; exec \"$@\"", "sh"],
            steps: [.init(waitFor: nil, send: "l\r"), .init(waitFor: "Update now or later?", send: "u\r")])
        #expect(!result.timedOut, "\(result.screen)")
        #expect(result.status == 0, "\(result.screen)")
        #expect(!FileManager.default.fileExists(atPath: output), "the typed-ahead l answered: \(result.screen)")
        #expect(try promptsShown() == before, "\(result.screen)")
    }
}
