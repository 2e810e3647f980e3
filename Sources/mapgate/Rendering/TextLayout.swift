import MapGate

/// Running text laid out in lines, as Chinese, Japanese, Korean and English each break them: the
/// help's paragraphs on a terminal (``Help``) and the manual's (``Help/manPage()``).
///
/// English and Korean break at spaces. Chinese and Japanese put none between words, and break
/// between any two characters but never before closing punctuation ("。", "）", a small kana) nor
/// after opening punctuation ("（", "「"). A word wider than the line is cut after a "/", else
/// where it must be.
enum TextLayout {
    /// The paragraphs of a translated text: blank lines separate them, single line breaks (where
    /// a translator's lines ended) do not. Lines are joined by a space, but for a break between
    /// two wide Chinese or Japanese characters, where those languages put none (Korean puts spaces
    /// between words: found by an attack, the Korean page ran words together), and beside
    /// full-width punctuation.
    static func paragraphs(_ text: String) -> [String] {
        text.components(separatedBy: "\n\n")
            .map { paragraph in
                paragraph.split(separator: "\n").map { $0.trimmingWhitespace() }.reduce("") { joined, line in
                    guard let last = joined.last, let first = line.first else { return joined + line }
                    // Nor after a full-width comma, stop or opening bracket, nor before a closing
                    // one, whatever the next word's script (found by an attack: `表示します。 --json`).
                    let unspaced =
                        [last, first].allSatisfy(breaksWithoutSpace) || "、。，．：；！？）」』】〉》（「『【〈《".contains(last)
                        || "、。，．：；！？）」』】〉》".contains(first)
                    return joined + (unspaced ? "" : " ") + line
                }
            }
            .filter { !$0.isEmpty }
    }

    /// `paragraph` (one line of running text) in lines of at most `width` terminal columns, with
    /// no space at either end of a line.
    static func wrapped(_ paragraph: String, width: Int) -> [String] {
        let width = max(width, 2)
        var lines: [String] = []
        // The line being filled: its characters, each with its columns and whether the line may
        // be broken just before it.
        var line: [(character: Character, columns: Int, breakBefore: Bool)] = []
        var columns = 0
        var previous: Character?
        for character in paragraph {
            defer { previous = character }
            if character == " " {
                if !line.isEmpty {
                    line.append((character, 1, false))
                    columns += 1
                }
                continue
            }
            let breakBefore = previous.map { $0 == " " || mayBreak(between: $0, and: character) } ?? false
            let taken = max(0, TerminalText.width(String(character)))
            line.append((character, taken, breakBefore))
            columns += taken
            while columns > width, line.count > 1 {
                // As many characters as fit, then back to the last break point among them (a
                // break just before the first that does not fit counts); a word wider than the
                // line is cut after a "/" (a path, an address), else where it must be.
                var fit = 0
                var used = 0
                while used + line[fit].columns <= width {
                    used += line[fit].columns
                    fit += 1
                }
                let cut = (1...max(fit, 1)).last { line[$0].breakBefore } ?? (1...max(fit, 1)).last { line[$0 - 1].character == "/" } ?? max(fit, 1)
                lines.append(text(line[..<cut]))
                line = Array(line[cut...].drop { $0.character == " " })
                columns = line.reduce(0) { $0 + $1.columns }
            }
        }
        if !line.isEmpty { lines.append(text(line[...])) }
        return lines
    }

    /// `name` and what it means, as the help lists options and commands: the meaning from column
    /// `column` on the name's line (on the next, when the name reaches it), wrapped beside it; on
    /// a terminal too narrow for that, under the name, indented by six.
    static func item(_ name: String, _ meaning: String, indent: Int = 2, column: Int, width: Int) -> [String] {
        let lead = String(repeating: " ", count: indent) + name
        guard width >= column + 24 else {
            return [lead] + wrapped(meaning, width: width - 6).map { String(repeating: " ", count: 6) + $0 }
        }
        let rest = wrapped(meaning, width: width - column).map { String(repeating: " ", count: column) + $0 }
        let leadColumns = TerminalText.width(lead)
        guard leadColumns + 2 <= column, let first = rest.first else { return [lead] + rest }
        return [lead + String(repeating: " ", count: column - leadColumns) + first.dropFirst(column)] + rest.dropFirst()
    }

    private static func text(_ slice: ArraySlice<(character: Character, columns: Int, breakBefore: Bool)>) -> String {
        var text = String(slice.map(\.character))
        while text.last == " " { text.removeLast() }
        return text
    }

    /// Whether a line may break between `before` and `after` where no space stands: between
    /// Chinese or Japanese characters, but for punctuation that must not begin or end a line.
    static func mayBreak(between before: Character, and after: Character) -> Bool {
        guard breaksWithoutSpace(before) || breaksWithoutSpace(after) else { return false }
        return !before.unicodeScalars.contains(where: opening.contains) && !after.unicodeScalars.contains(where: closing.contains)
    }

    /// A wide character of a language that puts no spaces between words (not Hangul).
    private static func breaksWithoutSpace(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first else { return false }
        return isWide(scalar) && !isHangul(scalar)
    }

    /// Punctuation after which a line never breaks.
    static let opening = Set("（「『【〈《〔［｛“‘".unicodeScalars)
    /// Punctuation before which a line never breaks, full-width and ASCII (a line never starts
    /// with "," either).
    static let closing = Set("。、，．・：；！？）」』】〉》〕］｝”’ー々ぁぃぅぇぉっゃゅょァィゥェォッャュョ,.:;!?)]}%".unicodeScalars)

    static func isWide(_ scalar: Unicode.Scalar) -> Bool { TerminalText.width(String(scalar)) == 2 }

    /// Hangul (syllables and jamo): wide, but Korean breaks lines at spaces, as English does.
    static func isHangul(_ scalar: Unicode.Scalar) -> Bool {
        (0xAC00...0xD7A3).contains(scalar.value) || (0x1100...0x11FF).contains(scalar.value) || (0x3130...0x318F).contains(scalar.value)
            || (0xA960...0xA97F).contains(scalar.value) || (0xD7B0...0xD7FF).contains(scalar.value)
    }
}
