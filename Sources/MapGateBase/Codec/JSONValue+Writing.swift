import FoundationEssentials

// The writer: the bytes `JSONSerialization.data(withJSONObject:options:)` writes.

extension JSONValue {
    /// `JSONSerialization.WritingOptions`' three options mapgate uses.
    public struct WritingOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let prettyPrinted = WritingOptions(rawValue: 1 << 0)
        public static let sortedKeys = WritingOptions(rawValue: 1 << 1)
        public static let withoutEscapingSlashes = WritingOptions(rawValue: 1 << 3)
    }

    /// A value JSON cannot hold (a NaN or infinite number), as `JSONSerialization` refused it.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The JSON text, as `JSONSerialization.data(withJSONObject:options:)` writes it.
    public func encoded(_ options: WritingOptions = []) throws(WriteError) -> Data {
        var writer = Writer(options: options)
        try writer.write(self)
        return Data(writer.bytes)
    }

    /// ``encoded(_:)`` of a tree of Swift values (see ``init(any:)``); throws for a value JSON has
    /// no form for.
    public static func encode(_ value: Any, _ options: WritingOptions = []) throws(WriteError) -> Data {
        guard let json = JSONValue(any: value) else { throw WriteError(description: "Invalid object cannot be serialized") }
        return try json.encoded(options)
    }

    private struct Writer {
        let pretty: Bool
        let sorted: Bool
        let escapeSlashes: Bool
        var bytes: [UInt8] = []
        var indent = 0

        init(options: WritingOptions) {
            pretty = options.contains(.prettyPrinted)
            sorted = options.contains(.sortedKeys)
            escapeSlashes = !options.contains(.withoutEscapingSlashes)
            bytes.reserveCapacity(1024)
        }

        mutating func write(_ value: JSONValue) throws(WriteError) {
            switch value {
            case .null: bytes += Array("null".utf8)
            case .bool(let flag): bytes += Array((flag ? "true" : "false").utf8)
            case .integer(let number): bytes += Array(String(number).utf8)
            case .double(let number):
                guard number.isFinite else { throw WriteError(description: "Invalid number value (\(number)) in JSON write") }
                var text = "\(number)"
                if text.hasSuffix(".0") { text.removeLast(2) }
                bytes += Array(text.utf8)
            case .string(let text): writeString(text)
            case .array(let elements):
                bytes.append(UInt8(ascii: "["))
                if pretty {
                    bytes.append(0x0A)
                    indent += 2
                }
                for (index, element) in elements.enumerated() {
                    if index > 0 { bytes += pretty ? [UInt8(ascii: ","), 0x0A] : [UInt8(ascii: ",")] }
                    if pretty { writeIndent() }
                    try write(element)
                }
                if pretty {
                    bytes.append(0x0A)
                    indent -= 2
                    writeIndent()
                }
                bytes.append(UInt8(ascii: "]"))
            case .object(let fields):
                bytes.append(UInt8(ascii: "{"))
                if pretty {
                    bytes.append(0x0A)
                    indent += 2
                    if !fields.isEmpty { writeIndent() }
                }
                let keys = sorted ? fields.keys.sorted(by: JSONValue.keyPrecedes) : Array(fields.keys)
                for (index, key) in keys.enumerated() {
                    if index > 0 {
                        if pretty {
                            bytes += [UInt8(ascii: ","), 0x0A]
                            writeIndent()
                        } else {
                            bytes.append(UInt8(ascii: ","))
                        }
                    }
                    writeString(key)
                    bytes += pretty ? Array(" : ".utf8) : [UInt8(ascii: ":")]
                    try write(fields[key] ?? .null)
                }
                if pretty {
                    bytes.append(0x0A)
                    indent -= 2
                    writeIndent()
                }
                bytes.append(UInt8(ascii: "}"))
            }
        }

        mutating func writeIndent() {
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
        }

        private static let hexDigits = Array("0123456789abcdef".utf8)

        /// `"`, `\` and C0 controls escaped (`\u000b`, lowercase hex), `/` unless asked not to;
        /// everything else as its UTF-8.
        mutating func writeString(_ text: String) {
            bytes.append(0x22)
            for byte in text.utf8 {
                switch byte {
                case 0x22: bytes += [0x5C, 0x22]
                case 0x5C: bytes += [0x5C, 0x5C]
                case 0x2F: bytes += escapeSlashes ? [0x5C, 0x2F] : [0x2F]
                case 0x08: bytes += [0x5C, UInt8(ascii: "b")]
                case 0x0C: bytes += [0x5C, UInt8(ascii: "f")]
                case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
                case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
                case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
                case 0..<0x20:
                    bytes += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0xF)]]
                default: bytes.append(byte)
                }
            }
            bytes.append(0x22)
        }
    }
}
