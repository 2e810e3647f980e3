/// Text from outside (catalog names, MBTiles metadata, release notes, request lines) made safe
/// for a terminal: control characters are shown as escapes, never passed through, so a hostile
/// name cannot clear the screen, retitle the window or forge a line of output.
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

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
            || scalar.value == 0x2028 || scalar.value == 0x2029
    }

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
