import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// The terminal: human output to stdout, diagnostics to stderr, colour only on a TTY and never
/// with `NO_COLOR`.
struct Console {
    let quiet: Bool
    let json: Bool
    let stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    let stderrIsTTY = isatty(STDERR_FILENO) == 1
    /// Where a question is asked: stderr when it is a terminal; else, when stdin is one, the
    /// controlling terminal (found by an attack: with `mapgate tile … 2>&1 | tee log` at a
    /// terminal the prompt went to the log and the use was counted as "later" unasked); -1 when
    /// no person can answer.
    let questionDescriptor: Int32 =
        isatty(STDIN_FILENO) != 1
        ? -1 : isatty(STDERR_FILENO) == 1 ? STDERR_FILENO : Console.controllingTerminal >= 0 ? Console.controllingTerminal : Console.writableStandardInput
    /// True when a person can answer a question (stdin is a terminal, and stderr or the
    /// controlling terminal shows the question).
    var isInteractive: Bool { questionDescriptor >= 0 }
    /// `/dev/tty` opened for writing once, when first needed (-1 without a controlling terminal).
    private static let controllingTerminal: Int32 = open("/dev/tty", O_WRONLY | O_CLOEXEC | O_NOCTTY)
    /// The controlling terminal, when no question is asked on it, stderr goes into a pipe or a
    /// socket that is not the journal, and this run is in the terminal's foreground (a background
    /// job's write there would stop it, with `stty tostop`); else nil.
    private var terminalBesideAPipe: Int32? {
        var info = stat()
        guard questionDescriptor < 0, !stderrIsJournal, Console.controllingTerminal >= 0, fstat(STDERR_FILENO, &info) == 0,
            info.st_mode & S_IFMT == S_IFIFO || info.st_mode & S_IFMT == S_IFSOCK,
            tcgetpgrp(Console.controllingTerminal) == getpgrp()
        else { return nil }
        return Console.controllingTerminal
    }

    /// Standard input when it is a terminal opened for writing too (as a shell's is): where the
    /// question goes without a controlling terminal (found by an attack: system mode's command,
    /// which has none, and `setsid mapgate … 2>log`, counted the use as "later" unasked); else -1.
    private static var writableStandardInput: Int32 {
        fcntl(STDIN_FILENO, F_GETFL) & O_ACCMODE == O_RDWR ? STDIN_FILENO : -1
    }
    let colorAllowed: Bool
    /// stderr is the journal (systemd's `JOURNAL_STREAM` names it): each line then starts with
    /// its syslog priority (`<5>` notice for the prompt, `<4>` warning, `<3>` error), which journald
    /// reads, so `journalctl -p notice` shows every use the service counted.
    let stderrIsJournal: Bool
    /// The update prompt also goes to the desktop (``DesktopNotification``).
    let notifiesDesktop: Bool

    init(quiet: Bool, json: Bool, environment: [String: String]) {
        self.quiet = quiet
        self.json = json
        colorAllowed = environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        stderrIsJournal = Self.isJournal(stream: environment["JOURNAL_STREAM"], descriptor: STDERR_FILENO)
        notifiesDesktop = DesktopNotification.isWanted(environment: environment, isInteractive: questionDescriptor >= 0)
    }

    /// Whether `descriptor` is the journal stream `stream` ("DEVICE:INODE", as systemd sets it).
    static func isJournal(stream: String?, descriptor: Int32) -> Bool {
        guard let stream else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return stream == "\(info.st_dev):\(info.st_ino)"
    }

    /// Normal output (suppressed by `--quiet`).
    func print(_ text: String) {
        guard !quiet else { return }
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Output that `--quiet` does not suppress (data the user asked for, JSON).
    func data(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// A notice on stderr (suppressed by `--quiet`).
    func note(_ text: String) {
        guard !quiet else { return }
        write(journal(text, priority: 6) + "\n", to: STDERR_FILENO)
    }

    /// A notice on stderr, as ``note(_:)``, waiting for stderr at most until `deadline`: for the
    /// signal router's thread, which holds the end of the run meanwhile (found by a review: a
    /// terminal stopped with Ctrl-S held a signalled run for good).
    func note(_ text: String, until deadline: ContinuousClock.Instant) {
        guard !quiet else { return }
        _ = writeBytes(TerminalText.allowingColour(journal(text, priority: 6) + "\n"), to: STDERR_FILENO, until: deadline)
    }

    /// A note on how the use the question was about ended (Ctrl-C at it, a server stopped before
    /// its first tile): on stderr, and also on the terminal the question was asked on when stderr
    /// goes to a file (`2>log`), so that the person who was asked sees it (found by an attack:
    /// the line went to the log only). Waits a second at most for each.
    func noteAboutUse(_ text: String) {
        note(text, until: ContinuousClock.now + .seconds(1))
        guard !quiet, questionDescriptor >= 0, questionDescriptor != STDERR_FILENO else { return }
        _ = writeBytes(TerminalText.allowingColour(text + "\n"), to: questionDescriptor, until: ContinuousClock.now + .seconds(1))
    }

    /// The update prompt on stderr: shown even with `--quiet`, since it counts a use.
    func prompt(_ text: String) {
        write(promptLine(text), to: STDERR_FILENO)
    }

    /// A line of the prompt as stderr gets it: in colour on a terminal, a notice in the journal.
    private func promptLine(_ text: String) -> String {
        journal(paint(text, .yellow, onStderr: true), priority: 5) + "\n"
    }

    /// The whole update prompt (``prompt(_:)`` for each line), and on the desktop when this run
    /// has one and no terminal: its first line the notification's summary, the rest its body.
    /// False when stderr did not take it by `deadline` (a full pipe nobody reads: found by an
    /// attack, a run blocked there held its use of the gate for as long as it liked).
    /// Each line is fitted to the terminal it goes to (``fitted(_:to:)``).
    @discardableResult
    func prompt(lines: [String], until deadline: ContinuousClock.Instant? = nil) -> Bool {
        for line in Self.fitted(lines, to: STDERR_FILENO) {
            guard let deadline else {
                prompt(line)
                continue
            }
            guard writeBytes(TerminalText.allowingColour(promptLine(line)), to: STDERR_FILENO, until: deadline) else { return false }
        }
        // The question goes to the terminal while stderr goes elsewhere (`2>log`, `2>&1 | grep
        // x`): the prompt's lines go there too, so that the person asked sees what about. Into a
        // pipe as well, though `2>&1 | tee log` then shows them twice: what reads the pipe may
        // never show them (found by an attack: `| grep error` left a bare "Update now or later?",
        // and "l" spent the last use unawares).
        if questionDescriptor >= 0, questionDescriptor != STDERR_FILENO {
            for line in Self.fitted(lines, to: questionDescriptor) {
                let text = TerminalText.allowingColour(line + "\n")
                if let deadline {
                    guard writeBytes(text, to: questionDescriptor, until: deadline) else { return false }
                } else {
                    writeBytes(text, to: questionDescriptor)
                }
            }
        } else if let terminal = terminalBesideAPipe {
            // Not asked (standard input is not a terminal: a `while read` loop), with stderr into
            // a pipe whose reader may not show it (`2>&1 | grep error`): the lines go to the
            // terminal the run is in the foreground of too (found by the attack on the copy
            // above: such loops spent the last use with nothing on the screen). Not for a file
            // or `/dev/null`, which the user chose; a second at most.
            let text = Self.fitted(lines, to: terminal).map { TerminalText.allowingColour($0 + "\n") }.joined()
            _ = writeBytes(text, to: terminal, until: ContinuousClock.now + .seconds(1))
        }
        if notifiesDesktop, let summary = lines.first {
            DesktopNotification.show(summary: summary, body: lines.dropFirst().joined(separator: "\n"))
        }
        return true
    }

    /// The prompt's lines fitted to the terminal on `descriptor`, wrapped as the help is (CJK
    /// between characters under the line-breaking rules, Korean and English at spaces), each
    /// piece keeping its line's indent; as they are when it is no terminal (a file, a pipe, the
    /// journal). Found by an attack: on a terminal 40 columns wide the terminal cut the prompt's
    /// words in two.
    static func fitted(_ lines: [String], to descriptor: Int32) -> [String] {
        let columns = TerminalText.columns(of: descriptor)
        guard columns > 0 else { return lines }
        return lines.flatMap { line -> [String] in
            let indent = String(line.prefix { $0 == " " })
            return TextLayout.wrapped(String(line.dropFirst(indent.count)), width: columns - indent.count).map { indent + $0 }
        }
    }

    /// An error on stderr, always shown. The message often names things from outside (a
    /// region's name, a URL): every control character in it is escaped.
    func error(_ text: String) {
        // A failure a signal made while it ends the run is the stop, which is said (``SignalRouter/isStopping``).
        guard !SignalRouter.isStopping.load(ordering: .acquiring) else { return }
        write(
            journal(paint(Localization.localized("error:"), .red, onStderr: true) + Self.afterLabel("error:") + TerminalText.block(text), priority: 3) + "\n",
            to: STDERR_FILENO)
    }

    /// A warning on stderr, always shown.
    func warning(_ text: String) {
        write(
            journal(paint(Localization.localized("warning:"), .yellow, onStderr: true) + Self.afterLabel("warning:") + TerminalText.block(text), priority: 4)
                + "\n", to: STDERR_FILENO)
    }

    /// `text` with the syslog `priority` before each of its lines when stderr is the journal.
    private func journal(_ text: String, priority: Int) -> String {
        guard stderrIsJournal else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { "<\(priority)>" + $0 }.joined(separator: "\n")
    }

    /// A space after "error:", none after a full-width colon ("错误：").
    private static func afterLabel(_ label: String) -> String {
        Localization.localized(label).hasSuffix("\u{FF1A}") ? "" : " "
    }

    enum Color: String {
        case red = "31"
        case green = "32"
        case yellow = "33"
        case bold = "1"
    }

    func paint(_ text: String, _ color: Color, onStderr: Bool = false) -> String {
        let tty = onStderr ? stderrIsTTY : stdoutIsTTY
        guard tty, colorAllowed else { return text }
        return "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m"
    }

    /// One `--json` line: a command's own Encodable line type, every key present (a `nil` is
    /// `null`: ``JSONValueEncoder``), keys sorted, escaped for a terminal (``JSONLine``).
    /// `onStandardError`: standard output carries the command's data (`export REGION -`).
    func json(_ line: some Encodable, onStandardError: Bool = false) {
        let value = (try? JSONValueEncoder.encode(line)) ?? .object(["error": .string("cannot write this line as JSON")])
        writeBytes(JSONLine.encode(value) + "\n", to: onStandardError ? STDERR_FILENO : STDOUT_FILENO, isJSON: true)
    }

    /// Drops what was typed at the terminal and not read yet (`tcflush`), so that only what is
    /// typed after the question appears answers it.
    func discardTypedAhead() {
        if isatty(STDIN_FILENO) == 1 { tcflush(STDIN_FILENO, TCIFLUSH) }
    }

    /// Asks a question on stderr and reads one line from stdin; nil at the end of input, or when
    /// no line came by `deadline` (nil: no limit). One deadline for the question and any asking
    /// again (found by an attack: each re-ask had its own ten minutes, so three answers not
    /// understood held the use for thirty). The question too must be taken by then.
    func ask(_ question: String, until deadline: ContinuousClock.Instant?) -> String? {
        let asking = questionDescriptor >= 0 ? questionDescriptor : STDERR_FILENO
        if let deadline {
            guard writeBytes(TerminalText.allowingColour(question), to: asking, until: deadline) else { return nil }
        } else {
            write(question, to: asking)
        }
        // Back in the foreground after a stop: the question again, on a line of its own (after
        // Ctrl-Z the shell has put the cursor there; after a continue without it, a line end first).
        let again = { (afterCtrlZ: Bool) in
            let until = min(deadline ?? .now + .seconds(1), ContinuousClock.now + .seconds(1))
            _ = self.writeBytes(TerminalText.allowingColour((afterCtrlZ ? "" : "\n") + question), to: asking, until: until)
        }
        switch TerminalInput.line(until: deadline, onContinue: again) {
        case .line(let line):
            return line
        case .end, .timedOut:
            // The end of input (Ctrl-D) or the deadline leaves the cursor after the question (or
            // after what was typed): what follows starts on a line of its own. Waited for a second
            // at most (found by an attack: on a terminal stopped with Ctrl-S this write blocked
            // for good, before the held use was given back).
            _ = writeBytes("\n", to: asking, until: ContinuousClock.now + .seconds(1))
            return nil
        }
    }

    /// Writes `text`; whatever it carries from outside, only mapgate's own colours, newlines and
    /// tabs reach the terminal (``TerminalText/allowingColour(_:)``).
    private func write(_ text: String, to descriptor: Int32) {
        writeBytes(TerminalText.allowingColour(text), to: descriptor)
    }

    /// Writes `text`, waiting for the reader to make room at most until `deadline`: false when it
    /// did not (or the reader is gone). Small pieces after `poll` says there is room, so that no
    /// write blocks past the deadline.
    private func writeBytes(_ text: String, to descriptor: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        let text = URLCredentials.redacted(in: text)
        var bytes = LocaleEncoding.bytes(text)[...]
        while !bytes.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0, entry.revents & Int16(POLLOUT | POLLERR) != 0 else {
                if ready == 0 { continue }  // the deadline is checked above
                return false
            }
            let piece = bytes.prefix(512)
            let written = piece.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR || errno == EAGAIN { continue }
            // A reader that is gone (a closed pipe) waits for nothing: as before, the run goes on.
            if written < 0, errno == EPIPE { return true }
            guard written > 0 else { return false }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// - Parameter isJSON: the text is a `--json` line, UTF-8 whatever the locale (RFC 8259);
    ///   anything else is written in the locale's character set (``LocaleEncoding``).
    private func writeBytes(_ text: String, to descriptor: Int32, isJSON: Bool = false) {
        let text = URLCredentials.redacted(in: text)
        var bytes = (isJSON ? Array(text.utf8) : LocaleEncoding.bytes(text))[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written < 0, errno == EAGAIN {
                // A descriptor another process made non-blocking: wait for room, as a blocking one would.
                var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, -1)
                continue
            }
            guard written > 0 else {
                // A closed pipe: nothing more to do; any other failure of standard output makes
                // the run fail at its end (MapGateCLI.main).
                if written < 0, descriptor == STDOUT_FILENO { StandardStreams.noteOutputFailure(errno) }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
