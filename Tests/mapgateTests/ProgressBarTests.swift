import Foundation
import MapGate
@testable import mapgate
import Testing

/// The download bar's rate and time left (issue 27: "659.5 MB/s … 0:00 left" at the start).
@Suite struct ProgressBarTests {
    @Test(arguments: [
        (Int64(4 << 20), Double(0.05)),  // the first packets, in 50 ms: no rate yet
        (Int64(1 << 10), Double(3)),  // three seconds, 1 KiB: no rate yet
    ])
    func noRateBeforeItMeansSomething(received: Int64, elapsed: Double) {
        #expect(ProgressBar.speed(received: received, of: 100 << 20, elapsed: elapsed) == "-/s -:-- left")
    }

    @Test func theRateIsOfThisRunsBytesOverItsTime() {
        // 10 MiB in 2 s: 5 MiB/s; 50 MiB to go: 10 s.
        let text = ProgressBar.speed(received: 10 << 20, of: 50 << 20, elapsed: 2)
        #expect(text.hasSuffix("/s 0:10 left"), "\(text)")
        #expect(text.hasPrefix("5.2 MB/s") || text.hasPrefix("5.0 MiB/s"), "\(text)")
    }

    /// Issue 29: the bar never wraps (a wrapped line cannot be drawn over): a long CJK name is cut
    /// by terminal columns, between characters, and the figures stay whole. On a narrow terminal
    /// the bar gives way before the numbers (found by an attack: at 40 columns the bar hid them).
    @Test(arguments: [(20, " 27%"), (30, " 27% 0:10 left"), (40, " 12.3 MB/45.6 MB 27% 0:10 left"), (60, " 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left"),
        (70, " [###-------] 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left"), (120, " [######------------------] 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left")])
    func theLineFitsTheTerminal(columns: Int, shown: String) {
        let label = "東京都 23区 とうきょう 🗾 서울특별시 Île-de-France"
        let figures = [
            " [######------------------] 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left", " [###-------] 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left",
            " 12.3 MB/45.6 MB 27% 5.2 MB/s 0:10 left", " 12.3 MB/45.6 MB 27% 0:10 left", " 27% 0:10 left", " 27%",
        ]
        let line = ProgressBar.fitted(label: label, figures: figures, columns: columns)
        // Two columns spare: "…" is two wide where ambiguous characters are drawn wide.
        #expect(TerminalText.width(line) <= columns - 2, "\(line)")
        #expect(line.hasSuffix(shown), "\(line)")
        let kept = String(line.dropLast(shown.count))
        #expect(kept == label || TerminalText.width(line) >= columns - 4, "room left unused: \(line)")
        #expect(line.unicodeScalars.allSatisfy { $0 != "\u{FFFD}" })
        // What is left of the label is its start, cut between characters.
        #expect(kept == label || kept.hasSuffix("…") && label.hasPrefix(String(kept.dropLast())), "\(line)")
    }

    /// A short label is whole beside the fullest figures that fit; a terminal too narrow for any
    /// is cut, never wrapped.
    @Test func aShortLabelAndATinyTerminal() {
        let figures = [" [----------] 1.0 MB/2.0 MB 50% -/s -:-- left", " 1.0 MB/2.0 MB 50%", " 50%"]
        #expect(ProgressBar.fitted(label: "geo", figures: figures, columns: 80) == "geo" + figures[0])
        #expect(ProgressBar.fitted(label: "geo", figures: figures, columns: 30) == "geo" + figures[1])
        #expect(TerminalText.width(ProgressBar.fitted(label: "東京都 23区", figures: figures, columns: 8)) <= 7)
    }

    @Test func truncationKeepsWholeCharacters() {
        #expect(TerminalText.truncated("東京都", toWidth: 6) == "東京都")
        #expect(TerminalText.truncated("東京都", toWidth: 5) == "東京…")
        #expect(TerminalText.truncated("東京都", toWidth: 4) == "東…")
        #expect(TerminalText.truncated("e\u{301}tude", toWidth: 3) == "e\u{301}t…")
        #expect(TerminalText.truncated("🗾🗾", toWidth: 3) == "🗾…")
    }

    /// A download that started over (a server that ignores the resume sends the package from its
    /// first byte again) is timed from that start, not from the bytes kept before (found by an
    /// attack: "3.3 KB/s 2:37:02 left" at 16 KB/s).
    @Test func aDownloadStartedOverIsTimedFromItsStart() {
        let bar = ProgressBar(label: "x", console: Console(quiet: false, json: false, environment: [:]))
        bar.update(262_144, of: 1 << 25)
        #expect(bar.baseline == 262_144)
        usleep(120_000)
        bar.update(4_096, of: 1 << 25)
        #expect(bar.baseline == 4_096)
        bar.finish()
    }

    /// Done is "0:00 left" however soon it came (found by an attack: a small file ended on
    /// "–:–– left").
    @Test func doneIsNoTimeLeft() {
        #expect(ProgressBar.speed(received: 1 << 10, of: 0, elapsed: 0.2).hasSuffix(" 0:00 left"))
        #expect(ProgressBar.timeLeft(received: 1 << 10, of: 0, elapsed: 0.2) == "0:00 left")
    }

    @Test func durationsPastAnHourHaveHours() {
        #expect(ProgressBar.duration(3725) == "1:02:05")
        #expect(ProgressBar.duration(59.6) == "1:00")
    }
}
