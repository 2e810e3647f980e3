import Foundation
import MapGate

/// Fixed-width columns for human tables.
enum Table {
    /// One row; every cell is made safe for the terminal first (names come from outside).
    static func row(_ cells: [String], widths: [Int]) -> String {
        zip(cells.map(TerminalText.inline), widths).map { cell, width in
            width == 0 || cell.count >= width ? cell + " " : cell.padding(toLength: width, withPad: " ", startingAt: 0)
        }.joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }
}
