import Foundation
import Testing
import TestSupport

/// The glossary in po/README.md is what each catalog calls mapgate's own things: a user who reads
/// "シリアル" in one message and "通し番号" in the next cannot tell that they are one number (found
/// by an attack on the languages: Japanese had two words for a catalog's serial, Korean two for a
/// delta, and three of the four catalogs another word for the publisher in a few messages).
@Suite struct GlossaryTests {
    /// The glossary's rows checked here: nouns that name one thing wherever they appear.
    static let checked = ["serial", "delta", "publisher", "catalog", "region", "version"]
    static let languages = ["zh_CN", "zh_TW", "ja", "ko"]

    /// The glossary's rows, by their English word (its first), with each language's words (a cell
    /// may give two, "版本 / 版").
    static func glossary() throws -> [String: [String: [String]]] {
        let text = try String(contentsOfFile: TestPaths.repository + "/po/README.md", encoding: .utf8)
        let table = text.split(separator: "## Glossary", maxSplits: 1).last ?? ""
        var rows: [String: [String: [String]]] = [:]
        for line in table.split(separator: "\n") where line.hasPrefix("| ") && !line.contains("---") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 1 + languages.count, let english = cells[0].split(separator: " ").first else { continue }
            rows[String(english)] = Dictionary(
                uniqueKeysWithValues: zip(languages, cells[1...].map { $0.split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces) } }))
        }
        return rows
    }

    @Test func everyMessageUsesTheGlossarysWord() throws {
        let rows = try Self.glossary()
        var offenders: [String] = []
        for english in Self.checked {
            let words = try #require(rows[english], "po/README.md's glossary has no row for \(english)")
            // The word as a noun of the message: not an option (`--serial`), a field or file name
            // (`"serial"`, `.delta`), nor the "version gate" (the gate's own row).
            let noun = try Regex(#"(?:^|[^-\w.`"'])"# + english + #"s?\b(?![-_.])"#).ignoresCase()
            for language in Self.languages {
                let expected = try #require(words[language])
                for entry in try PortableObject.entries(at: TestPaths.repository + "/po/\(language).po") {
                    guard entry.msgid.replacing("version gate", with: "gate").contains(noun) else { continue }
                    // A translation may keep the English word where it is a name (`serial は …`).
                    for translation in entry.translations where !expected.contains(where: translation.contains) && !translation.lowercased().contains(english) {
                        offenders.append("\(language) (\(english): \(expected.joined(separator: " / "))): msgid \"\(entry.msgid.prefix(80))…\"\n    msgstr \"\(translation.prefix(80))…\"")
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.count) translation(s) use another word than po/README.md's glossary:\n\(offenders.joined(separator: "\n"))")
    }
}
