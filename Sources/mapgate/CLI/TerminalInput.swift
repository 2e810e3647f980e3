import CLinux
import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// A line typed at the terminal, as text: UTF-8 when it is, else in the locale's own character
/// set (a Japanese user in `ja_JP.eucJP` types はい in EUC-JP: it read as nothing mapgate knew,
/// and the question was asked again until the run gave up; found by an attack).
enum TerminalInput {
    /// What reading a line gave.
    enum Read: Equatable {
        /// A line ended by the user (Enter), without its line end.
        case line(String)
        /// The end of input (Ctrl-D) or a read error, before a line was ended: no answer, even
        /// after some characters ("l", then Ctrl-D to back out; found by an attack: that counted
        /// as "later" and a use was spent).
        case end
        /// The deadline passed before the line was ended.
        case timedOut
    }

    /// The next line of standard input, read a byte at a time from a pipe or a file (so that
    /// nothing after the line is taken) and a line at a time from a terminal (so that a Ctrl-D
    /// after some characters is seen; at most 4 KiB of it are kept), the whole line by `deadline` (nil: no
    /// limit). Found by an attack: only the first byte had to come in time, so a few characters
    /// and one Ctrl-D (which hands them over without a line end) held the question, and the
    /// reserved use with it, for as long as the terminal stayed open.
    ///
    /// A terminal is read through a descriptor of its own that never blocks, and only while this
    /// run is in the terminal's foreground (found by an attack: sent to the background with
    /// Ctrl-Z and `bg`, the run saw the shell's keys, its read stopped it, and back in the
    /// foreground it waited in that read for good, past the deadline, with no question shown).
    /// `onContinue` runs once the run is in the foreground again after a continue (Ctrl-Z then
    /// `fg`; `kill -CONT`), with whether it had stopped itself for Ctrl-Z (the shell has then put
    /// the cursor on a line of its own): the shell's lines have pushed the question out of sight,
    /// and the stop dropped what was typed of the line (found by an attack).
    ///
    /// SIGTTIN is ignored while the line is read: a read that finds the run in the background after
    /// all (moved there between the look and the read) fails with EIO at once instead of stopping
    /// the run inside a read that, continued, would wait for ever (found by an attack, where the
    /// terminal cannot be opened again: another user's). What was typed of the line before a
    /// continue is dropped with the question shown again (found by the same attack: `l` and
    /// Ctrl-D, then Ctrl-Z and `fg`, and a bare Enter answered "later").
    static func line(until deadline: ContinuousClock.Instant?, onContinue: (_ afterCtrlZ: Bool) -> Void = { _ in }) -> Read {
        let input = readableWithoutBlocking()
        defer { if input != STDIN_FILENO { close(input) } }
        let backgroundRead = signal(SIGTTIN, SIG_IGN)
        defer { signal(SIGTTIN, backgroundRead) }
        var bytes: [UInt8] = []
        let lineEnds = canonicalLineEnds(input)
        let isTerminal = isatty(input) == 1
        var chunk = [UInt8](repeating: 0, count: lineEnds == nil ? 1 : 4096)
        var waiting = Waiting()
        while true {
            guard waitForInput(input, until: deadline, &waiting, onContinue: { afterCtrlZ in
                bytes.removeAll()
                // Ctrl-Z's stop drops the line typed so far (the terminal flushes it); a continue
                // without a stop (`kill -CONT`) does not, and `l` typed before it answered the
                // question shown again at its first Enter (found by an attack): dropped the same.
                if !afterCtrlZ, isatty(input) == 1 { tcflush(input, TCIFLUSH) }
                onContinue(afterCtrlZ)
            }) else { return .timedOut }
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            if count < 0, errno == EIO, !isForeground(input) { continue }
            guard count > 0 else { return .end }
            if let lineEnds {
                // A terminal's line (canonical mode) comes whole in one read, with its line end,
                // unless Ctrl-D handed over what was typed without one: that is the end, as
                // Ctrl-D on an empty line is (found by an attack: `l` then one Ctrl-D left the
                // question waiting with nothing said, and the next Enter answered "later").
                guard lineEnds.contains(chunk[count - 1]) else { return .end }
                bytes = Array(chunk[0..<min(count - 1, 4096)])
                break
            }
            if chunk[0] == 0x0A { break }
            // A terminal in raw mode (`stty raw`, `-icanon`) hands Ctrl-D and Ctrl-C over as
            // bytes: the end, as on any terminal (found by an attack: they were read as part of
            // the line, and the question held its use until its time ran out). Its Enter is a
            // carriage return, untranslated.
            if isTerminal, chunk[0] == 0x04 || chunk[0] == 0x03 { return .end }
            if isTerminal, chunk[0] == 0x0D { break }
            if bytes.count < 4096 { bytes.append(chunk[0]) }
        }
        while bytes.last == 0x0D { bytes.removeLast() }
        return .line(text(bytes, codeset: String(cString: clinux_codeset())))
    }

    /// The characters that end a line at the terminal at `descriptor` when it hands over whole
    /// lines (canonical mode: a newline, and `VEOL`/`VEOL2` when set); nil for a terminal in
    /// raw mode or anything else, which is read a byte at a time.
    private static func canonicalLineEnds(_ descriptor: Int32) -> Set<UInt8>? {
        var settings = termios()
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &settings) == 0, settings.c_lflag & tcflag_t(ICANON) != 0 else { return nil }
        var ends: Set<UInt8> = [0x0A]
        withUnsafeBytes(of: settings.c_cc) { characters in
            for index in [Int(VEOL), Int(VEOL2)] where characters[index] != 0 && characters[index] != 0xFF { ends.insert(characters[index]) }
        }
        return ends
    }

    /// Standard input opened again, non-blocking, when it is a terminal (a descriptor of its own:
    /// the shell's keeps blocking); standard input itself when that cannot be done (a terminal
    /// passed from another user's process, in system mode).
    private static func readableWithoutBlocking() -> Int32 {
        guard isatty(STDIN_FILENO) == 1 else { return STDIN_FILENO }
        let reopened = open("/proc/self/fd/0", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        return reopened >= 0 ? reopened : STDIN_FILENO
    }

    /// Whether this run is in the foreground of the terminal at `descriptor`. A terminal that is
    /// not this process's own (the system service's command reads its caller's) is the caller's:
    /// its place there, from `/proc`, says (found by an attack: started with `&`, or stopped from
    /// another shell, the caller left its command reading, and answering with, the keys typed at
    /// the shell). True when that cannot be told.
    private static func isForeground(_ descriptor: Int32) -> Bool {
        let group = tcgetpgrp(descriptor)
        if group >= 0 { return group == getpgrp() }
        guard let caller = getenv(SystemService.Settings.callerProcessVariable).flatMap({ Int32(String(cString: $0)) }), caller > 0,
            let process = ProcessStatus(of: caller), process.foregroundGroup > 0
        else { return true }
        return process.group == process.foregroundGroup
    }

    /// Whether the terminal at `descriptor` is another program's to read: the process the run
    /// answers for (its caller's, for the system service's command; else its own) has no
    /// controlling terminal (`setsid`), and going up its ancestors, none is in the terminal's
    /// foreground group (read in `/proc` from a process whose controlling terminal it is) before
    /// one is in a background job of the terminal's session (`setsid -w`, or a script, waiting in
    /// the foreground is the run's to answer for; a job sent to the background with `&` leaves the
    /// shell reading, found by the attack on the first version of this, which took the shell at
    /// its prompt for an ancestor waiting). Then the keys typed there are a shell's, and no run in
    /// a session of its own can come to the foreground to read them (found by an attack: `setsid
    /// mapgate …` at a shell read its answer from the keys typed at the shell, whose job `setsid`
    /// had left). False when `/proc` cannot tell, or no process has the terminal: no one else
    /// reads it.
    static func isDetached(from descriptor: Int32) -> Bool {
        let caller = getenv(SystemService.Settings.callerProcessVariable).flatMap { Int32(String(cString: $0)) }
        var info = stat()
        guard isatty(descriptor) == 1, fstat(descriptor, &info) == 0,
            let subject = ProcessStatus(of: caller ?? getpid()), subject.terminal == 0
        else { return false }
        // The kernel's number of a terminal and glibc's `dev_t` agree in their low 32 bits for
        // every major number below 4096 (pseudo-terminals are 136 to 143).
        let terminal = Int64(truncatingIfNeeded: UInt32(truncatingIfNeeded: info.st_rdev))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        var found: ProcessStatus?
        for name in names where name.first?.isNumber == true {
            guard let pid = Int32(name), let process = ProcessStatus(of: pid), process.terminal == terminal, process.foregroundGroup > 0 else { continue }
            found = process
            break
        }
        guard let found else { return false }
        var process: ProcessStatus? = subject
        for _ in 0..<64 {
            guard let current = process else { break }
            if current.group == found.foregroundGroup { return false }
            if current.session == found.session { return true }  // a background job of the terminal's
            guard current.parent > 1 else { break }
            process = ProcessStatus(of: current.parent)
        }
        return true
    }

    /// The fields of `/proc/PID/stat` these looks need.
    private struct ProcessStatus {
        var parent: Int32
        var group: Int32
        var session: Int32
        /// The controlling terminal's number (`tty_nr`), 0 without one.
        var terminal: Int64
        /// That terminal's foreground process group (`tpgid`), -1 without one.
        var foregroundGroup: Int32

        init?(of pid: Int32) {
            // Read as bytes: the name in it is cut at 15 bytes, maybe inside a character (found by
            // an attack: a script named `aデータ更新.sh` made its stat no UTF-8, and its run was
            // refused as detached).
            guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat"), let end = stat.lastIndex(of: UInt8(ascii: ")")) else {
                return nil
            }
            // After the name: state, parent, group, session, terminal, the terminal's foreground group.
            let fields = String(decoding: stat[stat.index(after: end)...], as: UTF8.self).split(separator: " ")
            guard fields.count > 5, let parent = Int32(fields[1]), let group = Int32(fields[2]), let session = Int32(fields[3]),
                let terminal = Int64(fields[4]), let foregroundGroup = Int32(fields[5])
            else { return nil }
            (self.parent, self.group, self.session, self.terminal, self.foregroundGroup) = (parent, group, session, terminal, foregroundGroup)
        }
    }

    /// What the wait has seen of stops and continues (``SignalRouter/continuations``, ``SignalRouter/stops``).
    private struct Waiting {
        var continuations = SignalRouter.continuations.load(ordering: .relaxed)
        var stops = SignalRouter.stops.load(ordering: .relaxed)
        /// A continue the question has not been shown again for.
        var continued = false
    }

    /// Waits until `descriptor` can be read (or is at its end, or failed) while this run is in
    /// the foreground: false when `deadline` passed first. Waiting again after a signal counts
    /// from the same deadline. The signals are taken by the router's thread, not here: a continue
    /// is seen by its count, looked at every quarter of a second.
    private static func waitForInput(
        _ descriptor: Int32, until deadline: ContinuousClock.Instant?, _ waiting: inout Waiting, onContinue: (Bool) -> Void
    ) -> Bool {
        var input = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            var milliseconds: Int32 = 250
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                milliseconds = min(250, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            }
            let continuations = SignalRouter.continuations.load(ordering: .relaxed)
            if continuations != waiting.continuations {
                waiting.continuations = continuations
                waiting.continued = true
            }
            // In the background the keys typed are the shell's: nothing is read or shown; back in
            // the foreground (`fg` sends a running job no continue) the question is shown again.
            guard isForeground(descriptor) else {
                waiting.continued = true
                _ = poll(nil, 0, milliseconds)
                continue
            }
            if waiting.continued {
                waiting.continued = false
                let stops = SignalRouter.stops.load(ordering: .relaxed)
                onContinue(stops != waiting.stops)
                waiting.stops = stops
            }
            let ready = poll(&input, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }  // the deadline and the foreground are looked at above
            return true  // ready, at its end, or failed: `read` says which
        }
    }

    /// `bytes` as text: UTF-8 when they are valid UTF-8, else converted from `codeset` (the
    /// locale's, `nl_langinfo(CODESET)`); bytes neither reads are replaced (U+FFFD), as before.
    static func text(_ bytes: [UInt8], codeset: String) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        guard !Localization.isReadable(codeset: codeset), let converted = convert(bytes, from: codeset) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return converted
    }

    /// `bytes` converted from `codeset` to UTF-8 with iconv, or nil when they are not text of it.
    private static func convert(_ bytes: [UInt8], from codeset: String) -> String? {
        let converter = iconv_open("UTF-8", codeset)
        guard let converter, Int(bitPattern: converter) != -1 else { return nil }
        defer { iconv_close(converter) }
        var input = bytes.map { CChar(bitPattern: $0) }
        // A character of any of these sets is at most 4 bytes, and at most 4 in UTF-8.
        var output = [CChar](repeating: 0, count: input.count * 4 + 4)
        let written = input.withUnsafeMutableBufferPointer { source -> Int? in
            output.withUnsafeMutableBufferPointer { target -> Int? in
                var inPointer = source.baseAddress
                var inLeft = source.count
                var outPointer = target.baseAddress
                var outLeft = target.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
                return target.count - outLeft
            }
        }
        guard let written else { return nil }
        return String(validating: output.prefix(written).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
