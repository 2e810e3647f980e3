import FoundationEssentials

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

    public var lines: [String] {
        var lines = ["mapgate \(availableVersion) is available (you have \(installedVersion))."]
        lines += releaseNotes.map { "  " + $0 }
        if let storeURL { lines.append("Update: \(TerminalText.inline(storeURL))") }
        let after = usesLeft - 1
        lines.append(
            "\(usesLeft) \(usesLeft == 1 ? "use" : "uses") left, this one included: "
                + (after == 0 ? "after this one mapgate requires the update." : "after \(after) more mapgate requires the update."))
        return lines
    }

    /// The first `count` non-empty lines, trimmed, with `…` when there were more; control
    /// characters in them escaped (the notes come from the store answer).
    public static func firstLines(_ text: String, count: Int) -> [String] {
        let lines = text.split(whereSeparator: \.isNewline)
            .map { TerminalText.inline($0.trimmingWhitespace()) }.filter { !$0.isEmpty }
        return lines.count > count ? Array(lines.prefix(count)) + ["…"] : lines
    }
}
