import CLinux
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The user's language (issue 29), through glibc's GNU gettext: message catalogs
/// (`mapgate.mo`) compiled from `po/` with `msgfmt`, chosen by `LANGUAGE`, `LC_ALL`,
/// `LC_MESSAGES` and `LANG`. English is the source and the fallback: until ``setUp(folder:)``
/// runs (the library in tests, `--json`), every text is the English it was written in.
///
/// Messages are marked with ``localized(_:)`` and ``localized(_:_:count:)`` on a string literal
/// (what `xgettext --keyword=localized --keyword=localized:1,2` extracts, po/README.md); their
/// placeholders are `%1$s`, `%2$s`, … (reorderable by translators) and `%d` for a count, filled by
/// ``format(_:_:)``. Never for what scripts parse: `--json`, exit codes, the request log.
public enum Localization {
    public static let domain = "mapgate"

    /// Where the catalogs are for a binary at `executable`: `../share/locale` beside it (the
    /// installed `/usr/bin/mapgate` reads `/usr/share/locale`), else a `locale` folder beside it
    /// (a checkout's `.build/debug/locale`, made by scripts/compile-translations).
    public static func folder(forExecutable executable: String) -> String? {
        let directory = PathText.deletingLastComponent(executable)
        for candidate in [PathText.deletingLastComponent(directory) + "/share/locale", directory + "/locale"] {
            if FileManager.default.fileExists(atPath: candidate + "/ja/LC_MESSAGES/\(domain).mo")
                || FileManager.default.fileExists(atPath: candidate + "/zh_CN/LC_MESSAGES/\(domain).mo")
            {
                return candidate
            }
        }
        return nil
    }

    /// Follows the environment's language for messages (once, at start, before any thread).
    /// A locale whose character set is neither UTF-8 nor ASCII (`ja_JP.eucJP`, `zh_TW.big5`,
    /// `ko_KR.euckr`) gets English: mapgate writes UTF-8, which such a terminal shows as garbage,
    /// and reads answers as UTF-8 (found by an attack: every answer at the prompt was re-asked).
    public static func setUp(folder: String?) {
        guard let folder else { return }
        _ = clinux_use_message_locale()
        let codeset = String(cString: clinux_codeset())
        guard isReadable(codeset: codeset) else {
            // English throughout, the C library's reasons too (found by an attack: a busy port's
            // reason came from strerror in EUC-JP, read as UTF-8, and said "??????G?").
            clinux_use_c_messages()
            return
        }
        _ = clinux_bind_text_domain(domain, folder)
        isSetUp = true
    }

    /// Whether text mapgate writes (UTF-8) reads right in a locale of this character set.
    package static func isReadable(codeset: String) -> Bool {
        let name = codeset.uppercased().filter { $0 != "-" && $0 != "_" }
        return name == "UTF8" || name == "ANSIX3.41968" || name == "ASCII" || name.isEmpty
    }

    nonisolated(unsafe) private static var isSetUp = false

    /// The folder the catalogs were found in (``folder(forExecutable:)``), also with `--json`:
    /// the server's pages take their language from each browser, not from the process.
    /// Set once, at start, before any thread.
    nonisolated(unsafe) public static var catalogFolder: String?

    /// Runs `body` with every message in English on this thread: for what is kept and read back
    /// by programs (the gate record's last lookup error, which `status --json` shows), never in
    /// the language of whoever happened to run mapgate.
    public static func inEnglish<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(englishKey)
        pthread_setspecific(englishKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(englishKey, previous) }
        return try body()
    }

    /// Set on a thread inside ``inEnglish(_:)``.
    private static let englishKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static var isTranslating: Bool { isSetUp && pthread_getspecific(englishKey) == nil }

    /// The message in the user's language, or `message` itself.
    public static func localized(_ message: String) -> String {
        guard isTranslating else { return message }
        return message.withCString { String(cString: clinux_dgettext(domain, $0)) }
    }

    /// The message in the user's language with its placeholders (`%1$s`, …) filled by
    /// `arguments`: `localized("region %1$s: %2$s", id, reason)`.
    public static func localized(_ template: String, _ arguments: String...) -> String {
        format(localized(template), arguments)
    }

    /// The plural form for `count` in the user's language (`ngettext`): English has two, Chinese,
    /// Japanese and Korean one.
    public static func localized(_ singular: String, _ plural: String, count: Int) -> String {
        guard isTranslating else { return count == 1 ? singular : plural }
        return singular.withCString { one in
            plural.withCString { many in String(cString: clinux_dngettext(domain, one, many, UInt(max(0, count)))) }
        }
    }

    /// A day as the user's language writes it (2026-12-01, 2026年12月1日, 2026. 12. 1.), the day
    /// a clock on the wall reads (local time: found by an attack, a region installed at 04:00 in
    /// Tokyo was "installed" the day before, beside a last lookup in local time).
    public static func day(_ date: Date) -> String {
        let text = LocalTime.day(date)  // YYYY-MM-DD
        let parts = text.split(separator: "-").map(String.init)
        guard parts.count == 3 else { return text }
        let month = String(Int(parts[1]) ?? 0)
        let day = String(Int(parts[2]) ?? 0)
        // TRANSLATORS: a day: %1$s the year, %2$s and %3$s the month and day with two digits, %4$s
        // and %5$s the month and day without a leading zero. Use those that fit your language.
        // xgettext:no-c-format
        return format(localized("%1$s-%2$s-%3$s"), parts[0], parts[1], parts[2], month, day)
    }

    /// `template` with `%1$s`, `%2$s`, … replaced by `arguments` (in any order a translation puts
    /// them), then `%s` and `%d` in order, and `%%` by `%`.
    public static func format(_ template: String, _ arguments: String...) -> String {
        format(template, arguments)
    }

    package static func format(_ template: String, _ arguments: [String]) -> String {
        var result = ""
        var next = 0
        var index = template.startIndex
        while index < template.endIndex {
            let character = template[index]
            guard character == "%", let after = template.index(index, offsetBy: 1, limitedBy: template.endIndex), after < template.endIndex else {
                result.append(character)
                index = template.index(after: index)
                continue
            }
            let rest = template[after...]
            if rest.hasPrefix("%") {
                result.append("%")
                index = template.index(after: after)
            } else if let match = rest.prefixMatch(of: /([1-9])\$[sd]/) {
                let position = Int(String(match.1))! - 1
                result += position < arguments.count ? arguments[position] : ""
                index = match.range.upperBound
            } else if rest.hasPrefix("s") || rest.hasPrefix("d") {
                result += next < arguments.count ? arguments[next] : ""
                next += 1
                index = template.index(after: after)
            } else {
                result.append(character)
                index = after
            }
        }
        return result
    }
}

/// Short for ``Localization`` where messages are marked (`L.localized("…")`).
package typealias L = Localization
