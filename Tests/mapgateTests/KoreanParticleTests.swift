import Foundation
import Testing
import TestSupport

/// Issue 37, Korean: a particle's form depends on the sound before it (을/를, 이/가, 은/는, 와/과,
/// 으로/로), and a placeholder's value is not known when the message is written, so a translation
/// that writes `%1$s을(를)` shows both forms to the user. po/ko.po rephrases those messages instead
/// ("%1$s 파일을", "%1$s 지역이", "버전 %1$s", a colon): these tests fail, naming the msgids, when a
/// fallback pair comes back after a placeholder, or at the start of a fragment that the code glues
/// after a path ("\(path) \(reason)").
@Suite struct KoreanParticleTests {
    static let catalog = TestPaths.repository + "/po/ko.po"

    /// The fallback pairs a translator writes when the sound before them is unknown.
    static let fallbackPairs = ["을(를)", "를(을)", "이(가)", "가(이)", "은(는)", "는(은)", "와(과)", "과(와)", "(으)로", "(이)나", "(이)라"]

    /// A printf placeholder (`%s`, `%1$s`, `%2$d`, `%lld`, …; not the `%s` of a literal `%%s`), then
    /// at most two closing quotes or brackets and a space, then a fallback pair.
    static func pairAfterPlaceholder() throws -> Regex<AnyRegexOutput> {
        let placeholder = #"(?:^|[^%])%(?:[0-9]+\$)?[-+ #0]*[0-9]*(?:\.[0-9]+)?(?:hh|h|ll|l|L|z|j|t)?[diouxXeEfFgGaAcs@]"#
        let closers = #"['"’”»)\]」』>]{0,2} ?"#
        let pairs = fallbackPairs.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|")
        return try Regex(placeholder + closers + "(?:" + pairs + ")")
    }

    @Test func noFallbackParticleFollowsAPlaceholder() throws {
        let pattern = try Self.pairAfterPlaceholder()
        let offenders = try PortableObject.entries(at: Self.catalog).filter { entry in
            entry.translations.contains { $0.contains(pattern) }
        }
        #expect(
            offenders.isEmpty,
            """
            \(offenders.count) message(s) in po/ko.po put a fallback particle pair (\(Self.fallbackPairs.joined(separator: " "))) \
            right after a placeholder; rephrase so that none follows it ("%1$s 파일을", "버전 %1$s", a colon):
            \(offenders.map { "  msgid \"\($0.msgid)\"\n    msgstr \"\($0.translations.joined(separator: "\" / \""))\"" }.joined(separator: "\n"))
            """)
    }

    /// One form of an alternating particle right after a placeholder (or its closing quote) is
    /// right for some values only (`'mapgate sync %1$s'로` reads wrong after a name ending in a
    /// consonant): found by an attack, five messages did it. A particle after a bracket belongs
    /// to the word before the bracket (`minzoom(%1$s)이`), which is known, and is not flagged.
    @Test func noAlternatingParticleFollowsAPlaceholder() throws {
        let placeholder = #"%(?:[0-9]+\$)?[sd]"#
        let particle = try Regex(placeholder + #"['"’”」』]?(?:을|를|이|가|은|는|와|과|으로|로)(?![가-힣])"#)
        let offenders = try PortableObject.entries(at: Self.catalog).filter { entry in
            entry.translations.contains { $0.contains(particle) }
        }
        #expect(
            offenders.isEmpty,
            """
            \(offenders.count) message(s) in po/ko.po put one form of an alternating particle right after a placeholder; \
            rephrase ("'…' 명령으로", "\"%1$s\" 키가", a noun after the placeholder):
            \(offenders.map { "  msgid \"\($0.msgid)\"\n    msgstr \"\($0.translations.joined(separator: "\" / \""))\"" }.joined(separator: "\n"))
            """)
    }

    /// A reason such as "is not a regular file" is shown after a path the code puts before it, so
    /// its translation must not begin with a particle pair that follows that unknown path.
    @Test func noFragmentStartsWithAFallbackPair() throws {
        let offenders = try PortableObject.entries(at: Self.catalog).filter { entry in
            entry.translations.contains { translation in Self.fallbackPairs.contains { translation.hasPrefix($0) } }
        }
        #expect(
            offenders.isEmpty,
            """
            \(offenders.count) fragment(s) in po/ko.po begin with a fallback particle pair, which then follows the path \
            the code puts before them; begin with a noun instead ("경로는", "파일을"):
            \(offenders.map { "  msgid \"\($0.msgid)\"\n    msgstr \"\($0.translations.joined(separator: "\" / \""))\"" }.joined(separator: "\n"))
            """)
    }

    /// The reader itself: continuation lines, escapes, plural forms, the header and obsolete entries.
    @Test func theCatalogReaderReadsWhatGettextWrites() throws {
        let work = try TemporaryDirectory()
        let path = work.file("sample.po")
        try #"""
            msgid ""
            msgstr ""
            "Language: ko\n"

            #: Sources/A.swift:1
            #, c-format
            msgid "region %1$s is not installed"
            msgstr ""
            "\"%1$s\"이(가) "
            "설치되어 있지 않습니다"

            msgid "%d region"
            msgid_plural "%d regions"
            msgstr[0] "지역 %d개"

            #~ msgid "old %1$s"
            #~ msgstr "%1$s을(를)"
            """#.write(toFile: path, atomically: true, encoding: .utf8)
        let entries = try PortableObject.entries(at: path)
        let pattern = try Self.pairAfterPlaceholder()
        #expect(entries.map(\.msgid) == ["region %1$s is not installed", "%d region"])
        #expect(entries.first?.translations == ["\"%1$s\"이(가) 설치되어 있지 않습니다"])
        #expect(entries.first?.translations.first?.contains(pattern) == true)
        #expect(entries.last?.translations == ["지역 %d개"])
        #expect(entries.last?.translations.first?.contains(pattern) == false)
    }
}

/// Just enough of a gettext catalog reader for these tests: each entry's msgid and its msgstr (or
/// every msgstr[N]), unescaped, joined across continuation lines; the header and `#~` obsolete
/// entries left out.
enum PortableObject {
    struct Entry {
        var msgid = ""
        var translations: [String] = []
    }

    static func entries(at path: String) throws -> [Entry] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var entries: [Entry] = []
        var current = Entry()
        var field: String?  // the keyword the last string belongs to
        func finish() {
            if !current.msgid.isEmpty { entries.append(current) }
            current = Entry()
            field = nil
        }
        func append(_ value: String) {
            switch field {
            case "msgid": current.msgid += value
            case let keyword? where keyword == "msgstr" || keyword.hasPrefix("msgstr["): current.translations[current.translations.count - 1] += value
            default: break  // msgctxt, msgid_plural
            }
        }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                finish()
            } else if line.hasPrefix("#") {
                if field == "msgstr" || field?.hasPrefix("msgstr[") == true { finish() }
            } else if line.hasPrefix("\"") {
                append(unquote(line))
            } else if let space = line.firstIndex(of: " ") {
                let keyword = String(line[..<space])
                if keyword == "msgid" || keyword == "msgctxt", field == "msgstr" || field?.hasPrefix("msgstr[") == true { finish() }
                field = keyword
                if keyword == "msgstr" || keyword.hasPrefix("msgstr[") { current.translations.append("") }
                append(unquote(String(line[line.index(after: space)...])))
            }
        }
        finish()
        return entries
    }

    /// `"a\"b\n"` → `a"b⏎`.
    static func unquote(_ quoted: String) -> String {
        var body = Substring(quoted.trimmingCharacters(in: .whitespaces))
        if body.hasPrefix("\"") { body = body.dropFirst() }
        if body.hasSuffix("\"") { body = body.dropLast() }
        var result = ""
        var escaping = false
        for character in body {
            if escaping {
                switch character {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                default: result.append(character)  // \" \\
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
