import CLinux
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Text as the bytes a terminal or a reader in the user's locale reads: UTF-8 where the locale's
/// character set is UTF-8 (or ASCII, which terminals of today read as UTF-8); in a locale of
/// another set (`ja_JP.eucJP`, `zh_TW.Big5`, `ko_KR.eucKR`) converted to it with iconv, a
/// character it cannot write transliterated or written as `?`.
///
/// Found by an attack (2026-12-06): in `ja_JP.eucJP` mapgate wrote UTF-8 as it is, so a region
/// named 国 reached the terminal as `e5 9b bd`, and 0x9B is the 8-bit "control sequence" byte: a
/// publisher's name such as `Û2JÛ31m…` cleared an 8-bit terminal and turned it red, past the
/// escaping that holds in UTF-8 (``TerminalText``); and mapgate's own `…` and `–` were garbage.
/// Converted, no byte of a UTF-8 sequence reaches such a terminal raw.
public enum LocaleEncoding {
    /// The locale's character set when UTF-8 does not read right in it; nil when it does.
    /// Set by ``setUp()``, once, before any thread.
    nonisolated(unsafe) public private(set) static var foreignCodeset: String?

    /// Reads the character set of the locale the environment names (`--json` runs too, whose
    /// process keeps the C locale: their lines for people, on stderr, reach the same terminal).
    public static func setUp() {
        let codeset = String(cString: clinux_environment_codeset())
        foreignCodeset = Localization.isReadable(codeset: codeset) ? nil : codeset
    }

    /// `text`'s bytes for this locale (``foreignCodeset``).
    public static func bytes(_ text: String) -> [UInt8] {
        guard let codeset = foreignCodeset else { return Array(text.utf8) }
        return convert(text, to: codeset) ?? Array(text.utf8).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }
    }

    /// `text` in `codeset`, each character iconv cannot write (after transliteration) as `?`;
    /// nil when iconv does not know the set. Only ASCII is left when it fails half-way.
    static func convert(_ text: String, to codeset: String) -> [UInt8]? {
        let converter = iconv_open(codeset + "//TRANSLIT", "UTF-8")
        guard let converter, Int(bitPattern: converter) != -1 else { return nil }
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var result: [UInt8] = []
        result.reserveCapacity(input.count + 16)
        var output = [CChar](repeating: 0, count: 4096)
        var offset = 0
        while offset < input.count {
            let (consumed, produced, failure) = input.withUnsafeMutableBufferPointer { source -> (Int, Int, Int32) in
                output.withUnsafeMutableBufferPointer { target -> (Int, Int, Int32) in
                    var inPointer: UnsafeMutablePointer<CChar>? = source.baseAddress! + offset
                    var inLeft = source.count - offset
                    var outPointer: UnsafeMutablePointer<CChar>? = target.baseAddress
                    var outLeft = target.count
                    let status = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (source.count - offset - inLeft, target.count - outLeft, status == -1 ? errno : 0)
                }
            }
            result.append(contentsOf: output[..<produced].map { UInt8(bitPattern: $0) })
            offset += consumed
            switch failure {
            case 0, E2BIG: continue
            case EILSEQ:
                // A character the set has no way to write: `?`, and on past its UTF-8 bytes.
                result.append(UInt8(ascii: "?"))
                offset += 1
                while offset < input.count, UInt8(bitPattern: input[offset]) & 0xC0 == 0x80 { offset += 1 }
            default:
                // Cut short (it cannot be: the text is whole UTF-8): the rest as ASCII.
                result.append(contentsOf: input[offset...].map { UInt8(bitPattern: $0) < 0x80 ? UInt8(bitPattern: $0) : UInt8(ascii: "?") })
                offset = input.count
            }
        }
        return result
    }
}
