import FoundationEssentials
import MapGate

/// A one-line download bar on a terminal's stderr: bytes, percent, rate, time left.
final class ProgressBar {
    private let label: String
    private let console: Console
    private var started = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false
    /// The bytes there when the bar started (a resumed download's): not part of the rate.
    private(set) var baseline: Int64?
    /// The bytes of the last call: fewer now means the download started over (a server that
    /// ignores the resume sends the whole package again).
    private var last: Int64 = 0

    init(label: String, console: Console) {
        self.label = label
        self.console = console
    }

    /// Whether bars are drawn at all: only on a terminal, and not with --quiet or --json.
    static func isWanted(_ console: Console) -> Bool {
        console.stderrIsTTY && !console.quiet && !console.json
    }

    func update(_ received: Int64, of total: Int64) {
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || received == total else { return }
        lastDraw = now
        // Started over: the rate is of the bytes of this start, from now (found by an attack: it
        // was measured from the bytes kept before, "3.3 KB/s 2:37:02 left" at 16 KB/s).
        if received < last {
            baseline = nil
            started = now
        }
        last = received
        let start = baseline ?? received
        baseline = start
        let fraction = total > 0 ? min(1, Double(received) / Double(total)) : 0
        func bar(_ width: Int) -> String {
            let filled = Int(fraction * Double(width))
            return " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        }
        let percent = " \(Int(fraction * 100))%"
        let amounts = " \(Format.bytes(received))/\(Format.bytes(total))" + percent
        let timing = Self.speed(received: received - start, of: total - received, elapsed: now.timeIntervalSince(started))
        let left = Self.timeLeft(received: received - start, of: total - received, elapsed: now.timeIntervalSince(started))
        // From the fullest to the barest: the bar goes first, then the rate, then the bytes; the
        // percent and the time left stay longest (found by an attack: at 40 columns the time left
        // went before the bytes did).
        let figures = [
            bar(24) + amounts + " " + timing, bar(10) + amounts + " " + timing, amounts + " " + timing, amounts + " " + left, percent + " " + left, percent,
        ]
        let line = Self.fitted(label: label, figures: figures, columns: TerminalText.columns(of: 2))
        UnixFile.standardError.write(Data(LocaleEncoding.bytes("\r\u{1B}[K" + line)))
        drawn = true
    }

    /// The bar's line within the terminal's `columns` (0: unknown, then 80): a line that wrapped
    /// could not be drawn over again. `figures` go from the fullest to the barest (the bar, then a
    /// shorter bar, then no bar, the rate, the time left): the first that leaves the label eight
    /// columns (or its whole width, when less) is drawn, so a narrow terminal keeps the numbers
    /// (found by an attack: at 40 columns the bar hid them all). The label gives way first, cut by
    /// terminal columns (a CJK name takes two per character).
    static func fitted(label: String, figures: [String], columns: Int) -> String {
        // Two columns spare, not one: "…" is two columns wide on a terminal that draws East Asian
        // ambiguous-width characters wide, as many set for Chinese, Japanese or Korean do.
        let room = (columns > 0 ? columns : 80) - 2
        let labelRoom = min(TerminalText.width(label), 8)
        guard let chosen = figures.first(where: { TerminalText.width($0) + labelRoom <= room }) else {
            return TerminalText.truncated(label + (figures.last ?? ""), toWidth: room)
        }
        return TerminalText.truncated(label, toWidth: room - TerminalText.width(chosen)) + chosen
    }

    /// Clears the bar so the result line can take its place.
    func finish() {
        if drawn { UnixFile.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// "12.5 MB/s 0:42 left" once the rate means something: after a second and a first 64 KiB
    /// received in this run (what a resumed download already had is not counted); until then
    /// "-/s -:-- left" rather than a rate of the first few packets ("659.5 MB/s … 0:00 left").
    static func speed(received: Int64, of remaining: Int64, elapsed: Double) -> String {
        // TRANSLATORS: a download's rate and the time left ("12.5 MB/s 0:42 left").
        // Hyphens, not dashes: a dash is two columns wide on a terminal that draws ambiguous
        // characters wide. Done is "0:00 left", however soon.
        if remaining <= 0 { return Localization.localized("%1$s/s %2$s left", received > 0 && elapsed > 0 ? Format.bytes(Int64(Double(received) / elapsed)) : "-", "0:00") }
        guard elapsed >= 1, received >= 64 << 10 else { return Localization.localized("%1$s/s %2$s left", "-", "-:--") }
        let rate = Double(received) / elapsed
        return Localization.localized("%1$s/s %2$s left", Format.bytes(Int64(rate)), remaining > 0 ? duration(Double(remaining) / rate) : "0:00")
    }

    /// "0:42 left", for a line with no room for the rate.
    static func timeLeft(received: Int64, of remaining: Int64, elapsed: Double) -> String {
        // TRANSLATORS: a download's time left, on a narrow terminal ("0:42 left").
        if remaining <= 0 { return Localization.localized("%1$s left", "0:00") }
        guard elapsed >= 1, received >= 64 << 10 else { return Localization.localized("%1$s left", "-:--") }
        return Localization.localized("%1$s left", remaining > 0 ? duration(Double(remaining) / (Double(received) / elapsed)) : "0:00")
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? "\(total / 3600):" + String(cFormat: "%02ld:%02ld", total % 3600 / 60, total % 60) : "\(total / 60):" + String(cFormat: "%02ld", total % 60)
    }
}
