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
    /// The next line of standard input without its line end, or nil at the end of input (or
    /// when it cannot be read). Read a byte at a time, so that nothing after the line is taken
    /// from a pipe; at most 4 KiB of it are kept.
    static func line() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else {
                if bytes.isEmpty { return nil }
                break
            }
            if byte == 0x0A { break }
            if bytes.count < 4096 { bytes.append(byte) }
        }
        while bytes.last == 0x0D { bytes.removeLast() }
        return text(bytes, codeset: String(cString: clinux_codeset()))
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
