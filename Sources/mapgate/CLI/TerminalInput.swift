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

    /// The next line of standard input, read a byte at a time (so that nothing after the line is
    /// taken from a pipe; at most 4 KiB of it are kept), the whole line by `deadline` (nil: no
    /// limit). Found by an attack: only the first byte had to come in time, so a few characters
    /// and one Ctrl-D (which hands them over without a line end) held the question, and the
    /// reserved use with it, for as long as the terminal stayed open.
    /// `onContinue` runs when the run is continued after a stop (Ctrl-Z, then `fg`) while it waits:
    /// the shell's lines have pushed the question out of sight, and the stop's Ctrl-Z dropped what
    /// was typed of the line (found by an attack: back in the foreground the run waited for an
    /// answer to a question no longer on the screen).
    static func line(until deadline: ContinuousClock.Instant?, onContinue: () -> Void = {}) -> Read {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            guard waitForInput(until: deadline, onContinue: onContinue) else { return .timedOut }
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count == 1 else { return .end }
            if byte == 0x0A { break }
            if bytes.count < 4096 { bytes.append(byte) }
        }
        while bytes.last == 0x0D { bytes.removeLast() }
        return .line(text(bytes, codeset: String(cString: clinux_codeset())))
    }

    /// Waits until standard input can be read (or is at its end, or failed): false when
    /// `deadline` passed first. Waiting again after a signal counts from the same deadline. The
    /// signals are taken by the router's thread, not here: a continue is seen by its count,
    /// looked at every quarter of a second.
    private static func waitForInput(until deadline: ContinuousClock.Instant?, onContinue: () -> Void) -> Bool {
        var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        var continuations = SignalRouter.continuations.load(ordering: .relaxed)
        while true {
            var milliseconds: Int32 = 250
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                milliseconds = min(250, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            }
            let ready = poll(&input, 1, milliseconds)
            let now = SignalRouter.continuations.load(ordering: .relaxed)
            if now != continuations {
                continuations = now
                onContinue()
            }
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }  // the deadline is checked above
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
