import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// A human table: columns as wide as their widest cell, so long versions or names never push
/// the columns out of line. Every cell is made safe for the terminal first (names come from
/// outside).
struct Table {
    let header: [String]
    /// The columns whose cells are cut to ``cappedWidth`` (a publisher's names).
    let capped: Set<Int>
    private(set) var rows: [[String]] = []

    /// The most terminal columns a capped cell takes, "…" included.
    static let cappedWidth = 48

    /// - Parameter capped: the columns cut to ``cappedWidth`` with "…" (found by a review: one
    ///   region named in 300 characters made every row of `list` 300 columns wide). Only free
    ///   text, never what a user types back (ids, versions): `--json` has it whole.
    init(header: [String], capped: Set<Int> = []) {
        self.header = header
        self.capped = capped
    }

    mutating func append(_ cells: [String]) {
        rows.append(cells.enumerated().map { column, cell in capped.contains(column) ? Self.cut(cell) : TerminalText.inline(cell) })
    }

    /// `cell` made safe and cut to ``cappedWidth`` with "…", between characters as shown: never
    /// inside a character's escape (`\u{202e}` is shown whole or not at all).
    private static func cut(_ cell: String) -> String {
        let safe = TerminalText.inline(cell)
        guard TerminalText.width(safe) > cappedWidth else { return safe }
        var kept = ""
        var used = 0
        for character in cell {
            let shown = TerminalText.inline(String(character))
            let width = TerminalText.width(shown)
            if used + width > cappedWidth - 1 { break }
            kept += shown
            used += width
        }
        return kept + "…"
    }

    /// The header line and the row lines, aligned by the columns each cell takes on a terminal
    /// (a CJK name or an emoji takes two per character): no cell is cut but a capped one.
    var lines: (header: String, rows: [String]) {
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(TerminalText.width).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in cell + String(repeating: " ", count: max(0, width - TerminalText.width(cell))) }
                .joined(separator: "  ").trimmingWhitespace()
        }
        return (line(header), rows.map(line))
    }

    /// Prints the header (a heading: `--quiet` drops it) and the rows (data: always printed).
    /// On a terminal narrower than the table (a phone's SSH client: 40 columns), each row is a
    /// block instead, its first cell then one line a column, `HEADING  value`, cut to the width
    /// (found by an attack: the rows wrapped into a jumble no one could read). Not on a pipe or
    /// a file: what a script reads stays one line a row.
    func print(to console: Console, columns: Int = TerminalText.columns(of: STDOUT_FILENO)) {
        let lines = self.lines
        guard columns > 0, ([lines.header] + lines.rows).contains(where: { TerminalText.width($0) > columns }) else {
            console.print(lines.header)
            for row in lines.rows { console.data(row) }
            return
        }
        for line in expanded(columns: columns) { console.data(line) }
    }

    /// The rows as blocks for a terminal `columns` wide (``print(to:columns:)``), a blank line
    /// between two.
    private func expanded(columns: Int) -> [String] {
        let headings = header.dropFirst()
        let headingWidth = headings.map(TerminalText.width).max() ?? 0
        var out: [String] = []
        for (index, row) in rows.enumerated() {
            if index > 0 { out.append("") }
            out.append(TerminalText.truncated(row.first ?? "", toWidth: columns))
            for (column, heading) in zip(headings.indices, headings) where column < row.count {
                let label = "  " + heading + String(repeating: " ", count: headingWidth - TerminalText.width(heading)) + "  "
                out.append(TerminalText.truncated(label + row[column], toWidth: columns))
            }
        }
        return out
    }
}
