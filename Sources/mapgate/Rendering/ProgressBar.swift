import FoundationEssentials
import MapGate

/// A one-line download bar on a terminal's stderr: bytes, percent, rate, time left.
final class ProgressBar {
    private let label: String
    private let console: Console
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

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
        let elapsed = max(0.001, now.timeIntervalSince(started))
        let rate = Double(received) / elapsed
        let fraction = total > 0 ? min(1, Double(received) / Double(total)) : 0
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let left = rate > 0 && total > received ? Self.duration(Double(total - received) / rate) : "0:00"
        let line = "\(label) [\(bar)] \(Format.bytes(received))/\(Format.bytes(total)) \(Int(fraction * 100))% \(Format.bytes(Int64(rate)))/s \(left) left"
        UnixFile.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// Clears the bar so the result line can take its place.
    func finish() {
        if drawn { UnixFile.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? "\(total / 3600):" + String(cFormat: "%02ld:%02ld", total % 3600 / 60, total % 60) : "\(total / 60):" + String(cFormat: "%02ld", total % 60)
    }
}
