import FoundationEssentials

// The order `JSONSerialization` with `.sortedKeys` gives keys, emulated without ICU. Still needed:
// what `publish` writes (styles, `vector_layers`) must keep the bytes, so the SHA-256, of
// what earlier versions wrote from the same input: a changed order would make every user download
// every style again, and a publisher's signed files would differ for no change of theirs.

extension JSONValue {
    /// Whether `left` sorts before `right` as `JSONSerialization` with `.sortedKeys` orders keys:
    /// `compare(_:options: [.numeric, .caseInsensitive, .forcedOrdering], locale: .system)`, which
    /// is ICU's root collation. For ASCII: spaces, then punctuation and symbols in root order
    /// (`_ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % ` ^ + < = > | ~ $`), then digit runs by
    /// their value, then letters case-insensitively; ties go to the lowercase letter first, then
    /// to the shorter digit run. Other characters sort after ASCII by scalar value.
    public static func keyPrecedes(_ left: String, _ right: String) -> Bool {
        let (a, b) = (collationElements(left), collationElements(right))
        for (x, y) in zip(a, b) where x.primary != y.primary {
            return x.primary.lexicographicallyPrecedes(y.primary)
        }
        if a.count != b.count { return a.count < b.count }
        for (x, y) in zip(a, b) where x.tertiary != y.tertiary {
            return x.tertiary < y.tertiary
        }
        return Array(left.unicodeScalars.map(\.value)).lexicographicallyPrecedes(right.unicodeScalars.map(\.value))
    }

    private struct CollationElement {
        /// Compared lexicographically: the class and weight, then a digit run's value digits.
        var primary: [UInt32]
        /// Case (0 lower, 1 upper) or a digit run's leading zeros.
        var tertiary: Int
    }

    private static let punctuationOrder: [UInt8] = Array("_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".utf8)

    private static func collationElements(_ text: String) -> [CollationElement] {
        var elements: [CollationElement] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let value = scalars[index].value
            if (0x30...0x39).contains(value) {
                var end = index
                while end < scalars.count, (0x30...0x39).contains(scalars[end].value) { end += 1 }
                var digits = scalars[index..<end].map { $0.value - 0x30 }
                var zeros = 0
                while digits.count > 1, digits[0] == 0 {
                    digits.removeFirst()
                    zeros += 1
                }
                // The class, then the length of the number, then its digits: numeric order.
                elements.append(CollationElement(primary: [3, UInt32(digits.count)] + digits, tertiary: zeros))
                index = end
                continue
            }
            let element: CollationElement
            switch value {
            case 0x09...0x0D: element = CollationElement(primary: [1, value], tertiary: 0)
            case 0x20: element = CollationElement(primary: [1, 0x0E], tertiary: 0)
            case 0x41...0x5A: element = CollationElement(primary: [4, value + 0x20], tertiary: 1)
            case 0x61...0x7A: element = CollationElement(primary: [4, value], tertiary: 0)
            case 0..<0x80:
                let rank = punctuationOrder.firstIndex(of: UInt8(value)).map(UInt32.init) ?? (0x100 + value)
                element = CollationElement(primary: [2, rank], tertiary: 0)
            default:
                element = CollationElement(primary: [5, value], tertiary: 0)
            }
            elements.append(element)
            index += 1
        }
        return elements
    }
}
