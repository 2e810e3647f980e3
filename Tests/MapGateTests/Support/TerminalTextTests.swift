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
}
