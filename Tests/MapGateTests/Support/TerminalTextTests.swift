import MapGate
import Testing

@Suite struct TerminalTextTests {
    @Test func controlsAreEscapedInline() {
        #expect(TerminalText.inline("a\u{1B}[2Jb") == "a\\e[2Jb")
        #expect(TerminalText.inline("title\u{1B}]0;pwned\u{07}") == "title\\e]0;pwned\\x07")
        #expect(TerminalText.inline("x\r\nerror: fake") == "x\\r\\nerror: fake")
        #expect(TerminalText.inline("csi\u{9B}2J") == "csi\\x9b2J")
        #expect(TerminalText.inline("Seoul 서울 ✓") == "Seoul 서울 ✓")
    }

    @Test func blockKeepsNewlinesOnly() {
        #expect(TerminalText.block("one\ntwo\r\u{1B}") == "one\ntwo\\r\\e")
    }

    @Test func ownColoursPassOtherSequencesDoNot() {
        #expect(TerminalText.allowingColour("\u{1B}[31merror:\u{1B}[0m x\n") == "\u{1B}[31merror:\u{1B}[0m x\n")
        #expect(TerminalText.allowingColour("\u{1B}[2J\u{1B}]0;t\u{07}") == "\\e[2J\\e]0;t\\x07")
    }

    /// Issue 26 item 8: U+202E (right-to-left override), U+202C, U+200B and U+FEFF reached the
    /// terminal raw and could reorder or hide what the user reads; the joiners stay.
    @Test func invisibleFormatCharactersAreEscaped() {
        #expect(TerminalText.inline("evil\u{202E}gpj.exe\u{202C}") == "evil\\u{202e}gpj.exe\\u{202c}")
        #expect(TerminalText.inline("a\u{200B}b\u{FEFF}c\u{2066}d") == "a\\u{200b}b\\u{feff}c\\u{2066}d")
        #expect(TerminalText.inline("before\u{0}after") == "before\\x00after")
        #expect(TerminalText.inline("👨\u{200D}👩\u{200D}👧 می\u{200C}خواهم") == "👨\u{200D}👩\u{200D}👧 می\u{200C}خواهم")
    }

    /// Table cells are aligned by terminal columns (`wcwidth`), not by code points or UTF-16
    /// units: an emoji name lost a character.
    @Test func widthIsTerminalColumns() {
        #expect(TerminalText.width("Seoul") == 5)
        #expect(TerminalText.width("서울") == 4)
        #expect(TerminalText.width("🗺️ map") == 6)
        #expect(TerminalText.width("🌍") == 2)
        #expect(TerminalText.width("e\u{301}") == 1)
        // A flag is two regional indicators that a terminal draws in two columns (found by an
        // attack: glibc counts one for the pair's first, and the row's later columns moved).
        #expect(TerminalText.width("🇯🇵 日本") == 7)
        #expect(TerminalText.width("🇰🇷🇹🇼") == 4)
        // Half-width katakana's voiced marks are a column each on a terminal, though Unicode
        // joins them to the kana before (found by a review: ｶﾞｲﾄﾞ's row was two columns short).
        #expect(TerminalText.width("ｶﾞｲﾄﾞ") == 5)
        #expect(TerminalText.width("ﾊﾟﾝ") == 3)
        #expect(TerminalText.truncated("ｶﾞｲﾄﾞ", toWidth: 3) == "ｶﾞ…")
    }
}
