import FoundationEssentials
import MapGateBase

/// The words of the "update now / later" prompt, shared by the CLI and the demo.
public struct GatePrompt: Sendable, Equatable {
    public let availableVersion: String
    public let installedVersion: String
    public let releaseNotes: [String]
    public let storeURL: String?
    /// Uses left, counting the one that shows this prompt (5 at the first, 1 at the fifth).
    public let usesLeft: Int

    public init(report: GateReport, usesLeft: Int) {
        availableVersion = report.requiredVersion ?? "?"
        installedVersion = report.installedVersion
        releaseNotes = Self.firstLines(report.record.lastRelease?.releaseNotes ?? "", count: 3)
        storeURL = report.storeURL
        self.usesLeft = usesLeft
    }

    /// In the user's language (``Localization``); English until it is set up.
    public var lines: [String] {
        let L = Localization.self
        var lines = [L.format(L.localized("mapgate %1$s is available (you have %2$s)."), availableVersion, installedVersion)]
        lines += releaseNotes.map { "  " + $0 }
        if let storeURL { lines.append(L.format(L.localized("Update: %s"), TerminalText.inline(storeURL))) }
        let after = usesLeft - 1
        let left = L.format(L.localized("%d use left, this one included", "%d uses left, this one included", count: usesLeft), String(usesLeft))
        let then = after == 0
            ? L.localized("after this one mapgate requires the update.")
            : L.format(L.localized("after %d more mapgate requires the update.", "after %d more mapgate requires the update.", count: after), String(after))
        // TRANSLATORS: the prompt's last line: %1$s is "5 uses left, this one included", %2$s is
        // "after 4 more mapgate requires the update." (both translated above).
        lines.append(L.format(L.localized("%1$s: %2$s"), left, then))
        return lines
    }

    /// The first `count` non-empty lines, trimmed, with `…` when there were more; control
    /// characters in them escaped (the notes come from the store answer).
    ///
    /// - Parameter forTerminal: control characters escaped for a terminal; false for a page or
    ///   JSON, which show text as text (found by an attack: `/health` and the viewer showed
    ///   the terminal's `\u{202e}` escapes).
    public static func firstLines(_ text: String, count: Int, forTerminal: Bool = true) -> [String] {
        let lines = text.split(whereSeparator: \.isNewline)
            .map { forTerminal ? TerminalText.inline($0.trimmingWhitespace()) : String($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        return lines.count > count ? Array(lines.prefix(count)) + ["…"] : lines
    }
}
