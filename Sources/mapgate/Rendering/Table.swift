import FoundationEssentials
import MapGate

/// A human table: columns as wide as their widest cell, so long versions or names never push
/// the columns out of line. Every cell is made safe for the terminal first (names come from
/// outside).
struct Table {
    let header: [String]
    private(set) var rows: [[String]] = []

    init(header: [String]) {
        self.header = header
    }

    mutating func append(_ cells: [String]) {
        rows.append(cells.map(TerminalText.inline))
    }

    /// The header line and the row lines, aligned by the columns each cell takes on a terminal
    /// (a CJK name or an emoji takes two per character): no cell is ever cut.
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
    func print(to console: Console) {
        let lines = self.lines
        console.print(lines.header)
        for row in lines.rows { console.data(row) }
    }
}
