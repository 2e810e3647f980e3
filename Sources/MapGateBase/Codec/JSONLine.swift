import FoundationEssentials

/// Writes one JSON value on one line, keys sorted, for `--json` output.
///
/// Foundation's `JSONSerialization` with `.sortedKeys` compares keys through ICU with a locale
/// (a collator set up per comparison): 50,000 catalog lines took 9.9 s against 1.5 s for the text
/// table. Keys here are sorted case-insensitively, then by their bytes (the order
/// `JSONSerialization` gives mapgate's ASCII keys), and the bytes are written directly.
///
/// Strings escape `"`, `\` and C0 controls as JSON requires, and also DEL, the C1 controls and
/// U+2028/U+2029 (which JSON lets through raw) as `\uXXXX`, so no terminal acts on them. `/` is
/// not escaped. In a locale of another character set than UTF-8 (``LocaleEncoding``) every
/// character past ASCII is escaped too, so the line stays UTF-8 (as JSON must be) and still puts
/// no byte on such a terminal that it would take for a control code (found by an attack: 国 is
/// e5 9b bd, and 0x9B starts a control sequence on an 8-bit terminal).
///
/// Numbers: integers as such; a finite `Double` with no fraction as an integer, others in Swift's
/// shortest form; a non-finite one as `null`.
public enum JSONLine {
    /// A JSON value (what every `--json` line is, from ``JSONValueEncoder``): no dynamic casts.
    public static func encode(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        appendJSON(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendJSON(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes += Array("null".utf8)
        case .bool(let flag): bytes += Array((flag ? "true" : "false").utf8)
        case .integer(let number): bytes += Array(String(number).utf8)
        case .double(let number): appendDouble(number, to: &bytes)
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendJSON(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let fields):
            bytes.append(UInt8(ascii: "{"))
            // The same order as for dictionaries: case-insensitively, then by bytes; each key
            // lowered once, not at every comparison.
            let keys = fields.keys.map { ($0.lowercased(), $0) }.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
            for (index, key) in keys.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(key.1, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                appendJSON(fields[key.1] ?? .null, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static func appendDouble(_ number: Double, to bytes: inout [UInt8]) {
        guard number.isFinite else { bytes += Array("null".utf8); return }
        if number == number.rounded(), abs(number) < 1e15 {
            bytes += Array(String(Int64(number)).utf8)
        } else {
            bytes += Array("\(number)".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        let asciiOnly = LocaleEncoding.foreignCodeset != nil
        func escape(_ unit: UInt32) {
            bytes += [0x5C, UInt8(ascii: "u")]
            for shift in stride(from: 12, through: 0, by: -4) { bytes.append(hexDigits[Int((unit >> UInt32(shift)) & 0xF)]) }
        }
        bytes.append(UInt8(ascii: "\""))
        for scalar in text.unicodeScalars {
            let value = scalar.value
            switch value {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
            case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
            case 0x08: bytes += [0x5C, UInt8(ascii: "b")]
            case 0x0C: bytes += [0x5C, UInt8(ascii: "f")]
            case 0..<0x20, 0x7F, 0x80...0x9F, 0x2028, 0x2029:
                escape(value)
            case 0..<0x80:
                bytes.append(UInt8(value))
            case 0x10000... where asciiOnly:
                // A UTF-16 surrogate pair (RFC 8259 §7).
                escape(0xD800 + ((value - 0x10000) >> 10))
                escape(0xDC00 + ((value - 0x10000) & 0x3FF))
            default:
                if asciiOnly { escape(value) } else { bytes += Array(String(scalar).utf8) }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
