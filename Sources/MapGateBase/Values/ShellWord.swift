/// A word of a command said to the user to run (`mapgate sync --from /media/USB DISK`), as a
/// POSIX shell reads it back: as it is when it holds only characters no shell treats specially,
/// else in double quotes, with `\`, `"`, `$` and `` ` `` escaped. Double, not single, quotes: the
/// command is said inside single quotes (`run 'mapgate sync --from "/media/USB DISK"' again`), and
/// a word in single quotes there ended the quote (found by an attack: a stick named with a space
/// gave advice that, pasted, took its second word for a region).
public enum ShellWord {
    public static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./:=@%+,".unicodeScalars.contains($0) || $0.value > 0x7F
        }
        guard !plain else { return word }
        var quoted = "\""
        for character in word {
            if "\\\"$`".contains(character) { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// `words` as one command line.
    public static func command(_ words: [String]) -> String {
        words.map(quoted).joined(separator: " ")
    }
}
