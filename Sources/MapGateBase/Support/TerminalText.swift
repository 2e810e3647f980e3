import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Text from outside (catalog names, MBTiles metadata, release notes, request lines) made safe
/// for a terminal: control characters are shown as escapes, never passed through, so a hostile
/// name cannot clear the screen, retitle the window or forge a line of output; nor can invisible
/// format characters (right-to-left overrides, zero-width spaces, byte-order marks) reorder or
/// hide what the user reads.
public enum TerminalText {
    /// For one line or one table cell: every control character, line breaks included, escaped
    /// (`\n`, `\r`, `\t`, `\e`, else `\x07` or `\u{9b}`).
    public static func inline(_ text: String) -> String {
        escape(text, keepingNewlines: false)
    }

    /// For text of several lines (release notes): line breaks kept, every other control escaped.
    public static func block(_ text: String) -> String {
        escape(text, keepingNewlines: true)
    }

    /// For mapgate's own output, which may carry its own colours: only SGR sequences
    /// (`ESC [ digits ; … m`), newlines and tabs pass; every other control character is escaped.
    public static func allowingColour(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\u{1B}", let end = sgrEnd(scalars, from: index) {
                result.unicodeScalars.append(contentsOf: scalars[index...end])
                index = end + 1
                continue
            }
            if scalar == "\n" || scalar == "\t" || !isControl(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += escaped(scalar)
            }
            index += 1
        }
        return result
    }

    private static func sgrEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 2 < scalars.count, scalars[start + 1] == "[" else { return nil }
        var index = start + 2
        while index < scalars.count, index - start < 32 {
            let scalar = scalars[index]
            if scalar == "m" { return index }
            guard ("0"..."9").contains(scalar) || scalar == ";" else { return nil }
            index += 1
        }
        return nil
    }

    /// Controls, line and paragraph separators, and format characters (Unicode category Cf:
    /// bidirectional overrides and isolates U+202A–U+202E and U+2066–U+2069, U+200B, U+FEFF, …)
    /// but the joiners U+200C and U+200D, which scripts and emoji sequences need.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) { return true }
        if scalar.isASCII { return false }
        if scalar.value == 0x2028 || scalar.value == 0x2029 { return true }
        return scalar.properties.generalCategory == .format && scalar.value != 0x200C && scalar.value != 0x200D
    }

    /// The columns `text` takes on a terminal (`wcwidth` in a UTF-8 locale, per character: a
    /// CJK character or an emoji takes two, a combining mark none), for aligning tables. Text
    /// with controls counts them as they are; escape it first.
    public static func width(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        guard let locale = utf8Locale else { return text.count }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        var columns = 0
        for character in text {
            let scalars = character.unicodeScalars
            guard let first = scalars.first else { continue }
            // An emoji shown as a picture (U+FE0F after it) takes two columns whatever its base
            // says, and so does a flag: two regional indicators, each of which glibc counts as
            // one (found by an attack: a flag in a region's name pushed its row's columns right).
            let base = Int(wcwidth(wchar_t(bitPattern: first.value)))
            let isFlag = scalars.count >= 2 && (0x1F1E6...0x1F1FF).contains(first.value)
            columns += scalars.contains("\u{FE0F}") || isFlag ? 2 : max(0, base)
            // Half-width katakana's voiced and semi-voiced marks (U+FF9E, U+FF9F) extend the kana
            // before them in Unicode's characters, yet a terminal draws each in a column of its
            // own, as `wcwidth` says (found by a review: a name in half-width kana was short).
            columns += scalars.dropFirst().count { $0.value == 0xFF9E || $0.value == 0xFF9F }
        }
        return columns
    }

    /// The columns of the terminal on `descriptor`, or 0 when it is not one (`TIOCGWINSZ`).
    public static func columns(of descriptor: Int32) -> Int {
        Int(clinux_terminal_columns(descriptor))
    }

    /// `text` cut to at most `columns` terminal columns, between characters (never inside a CJK
    /// character, an emoji or a combining sequence), with "…" where it was cut.
    public static func truncated(_ text: String, toWidth columns: Int) -> String {
        guard width(text) > columns else { return text }
        guard columns > 1 else { return columns == 1 ? "…" : "" }
        var kept = ""
        var used = 0
        for character in text {
            let next = width(String(character))
            if used + next > columns - 1 { break }
            kept.append(character)
            used += next
        }
        return kept + "…"
    }

    /// `text` with at most `codePoints` Unicode scalars, and "…" where it was cut: text from
    /// outside quoted in a message, bounded by what it holds, not by its characters (one
    /// character may hold any number of combining marks: found by attacks, a line of megabytes).
    public static func capped(_ text: String, codePoints: Int) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > codePoints else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(codePoints))) + "…"
    }

    /// glibc's built-in UTF-8 locale, made once (nil when the C library has none). Safe to
    /// share: never changed or freed, only handed to `uselocale` on the calling thread.
    nonisolated(unsafe) private static let utf8Locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)

    private static func escape(_ text: String, keepingNewlines: Bool) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if keepingNewlines, scalar == "\n" {
                result.unicodeScalars.append(scalar)
            } else if isControl(scalar) {
                result += escaped(scalar)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case "\u{1B}": return "\\e"
        default:
            let hex = String(scalar.value, radix: 16)
            return scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
        }
    }
}
