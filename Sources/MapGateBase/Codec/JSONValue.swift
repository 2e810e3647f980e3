import FoundationEssentials

/// One JSON value, for the places that read or write JSON whose shape is not fixed (a catalog,
/// a publisher's `style.json`, TileJSON `vector_layers`, an App Store lookup answer, settings files).
///
/// It replaces Foundation's `JSONSerialization`, which mapgate does not link (it brings ICU): the
/// parser accepts what `JSONSerialization` accepts (RFC 8259, plus trailing commas and a UTF-8
/// byte order mark) and its errors say the same things ("Invalid value around character 7.");
/// ``encoded(_:)`` writes the bytes `JSONSerialization` writes with the same options: keys sorted
/// in its order (ICU's root collation, numeric, case-insensitive first; exact for ASCII keys), `/`
/// escaped unless `withoutEscapingSlashes`, the pretty printer's `"key" : value` and two-space
/// indentation, numbers as Swift prints them with a trailing `.0` dropped.
///
/// Numbers read as ``integer(_:)`` when they have no fraction or exponent and fit in an `Int64`,
/// else as ``double(_:)`` (`JSONSerialization` kept an integer beyond `Int64` exact; mapgate
/// writes and reads none: sizes, serials and zoom levels are `Int64` at most). The number accessors (``int``, ``double``, ``bool``) convert as
/// `NSNumber` bridging did (`true` is 1, `1.0` is the integer 1, `1.5` is no integer).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

// MARK: - Reading values

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// A JSON `true` or `false` (not a number).
    public var isBoolean: Bool {
        if case .bool = self { return true }
        return false
    }

    /// A number or a boolean: what `JSONSerialization` gave as an `NSNumber`.
    public var isNumber: Bool {
        switch self {
        case .bool, .integer, .double: true
        default: false
        }
    }

    /// The value as an `Int`, when it is a number (or boolean) that is exactly one.
    public var int: Int? {
        switch self {
        case .bool(let flag): flag ? 1 : 0
        case .integer(let number): Int(exactly: number)
        case .double(let number): Int(exactly: number)
        default: nil
        }
    }

    /// The value as an `Int64`, when it is a number (or boolean) that is exactly one.
    public var int64: Int64? {
        switch self {
        case .bool(let flag): flag ? 1 : 0
        case .integer(let number): number
        case .double(let number): Int64(exactly: number)
        default: nil
        }
    }

    /// The value as a `Double`, when it is a number (or boolean): `NSNumber.doubleValue`.
    public var double: Double? {
        switch self {
        case .bool(let flag): flag ? 1 : 0
        case .integer(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// The value as a `Bool`: a boolean, or the number 0 or 1.
    public var bool: Bool? {
        switch self {
        case .bool(let flag): flag
        case .integer(let number): number == 0 ? false : number == 1 ? true : nil
        case .double(let number): number == 0 ? false : number == 1 ? true : nil
        default: nil
        }
    }
}

// MARK: - From Swift values

extension JSONValue {
    /// The JSON form of a tree of Swift values as `JSONSerialization` takes them: `String`,
    /// `Bool`, integers, `Double`, `Float`, `[String: Any]`, `[Any]`, `JSONValue`, and `nil`
    /// optionals (as `null`). Nil for anything else.
    public init?(any value: Any) {
        switch value {
        case let json as JSONValue: self = json
        case let text as String: self = .string(text)
        case let flag as Bool: self = .bool(flag)
        case let number as Int: self = .integer(Int64(number))
        case let number as Int64: self = .integer(number)
        case let number as Int32: self = .integer(Int64(number))
        case let number as Int16: self = .integer(Int64(number))
        case let number as Int8: self = .integer(Int64(number))
        case let number as UInt8: self = .integer(Int64(number))
        case let number as UInt16: self = .integer(Int64(number))
        case let number as UInt32: self = .integer(Int64(number))
        case let number as UInt: self = Int64(exactly: number).map { .integer($0) } ?? .double(Double(number))
        case let number as UInt64: self = Int64(exactly: number).map { .integer($0) } ?? .double(Double(number))
        case let number as Double: self = .double(number)
        // Float's own shortest digits (0.1, not 0.10000000149011612), as JSONSerialization writes it.
        case let number as Float: self = .double(Double("\(number)") ?? Double(number))
        case let fields as [String: Any]:
            var object: [String: JSONValue] = [:]
            object.reserveCapacity(fields.count)
            for (key, element) in fields {
                guard let converted = JSONValue(any: element) else { return nil }
                object[key] = converted
            }
            self = .object(object)
        case let elements as [Any]:
            var array: [JSONValue] = []
            array.reserveCapacity(elements.count)
            for element in elements {
                guard let converted = JSONValue(any: element) else { return nil }
                array.append(converted)
            }
            self = .array(array)
        default:
            guard let optional = value as? any JSONOptional else { return nil }
            guard let wrapped = optional.wrappedAny else {
                self = .null
                return
            }
            guard let converted = JSONValue(any: wrapped) else { return nil }
            self = converted
        }
    }
}

/// Lets ``JSONValue/init(any:)`` and ``JSONLine`` see through an `Optional` stored in an `Any`.
protocol JSONOptional {
    var wrappedAny: Any? { get }
}

extension Optional: JSONOptional {
    var wrappedAny: Any? { self.map { $0 as Any } }
}

// MARK: - Writing

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

// MARK: - Key order

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

// MARK: - Parsing

extension JSONValue {
    /// Why a text is not JSON, worded as `JSONSerialization` words it (its `NSDebugDescription`).
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        /// The document nests more than ``JSONValue/maximumDepth`` arrays or objects.
        public var isNestedTooDeeply = false

        /// The description, with the limit when the document is nested too deeply (for messages).
        public var explanation: String {
            isNestedTooDeeply ? "nested too deeply: more than \(JSONValue.maximumDepth) arrays or objects inside each other (the limit; \(description))" : description
        }
    }

    /// Arrays and objects inside each other that a document may hold (as JSONSerialization).
    public static let maximumDepth = 512

    /// Parses a JSON document whose top level is an object or an array.
    public init(parsing data: some Collection<UInt8>) throws(ParseError) {
        var parser = Parser(bytes: Array(data))
        self = try parser.parseDocument()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var depth = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        static func invalid(_ index: Int) -> ParseError { ParseError(description: "Invalid value around character \(index).") }
        static let endOfFile = ParseError(description: "Unexpected end of file during JSON parse.")

        mutating func parseDocument() throws(ParseError) -> JSONValue {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
            let value = try parseValue()
            skipWhitespace()
            if index < bytes.count { throw Self.invalid(index) }
            switch value {
            case .array, .object: return value
            default:
                throw ParseError(description: "JSON text did not start with array or object and option to allow fragments not set.")
            }
        }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        /// The next byte after whitespace, not consumed.
        mutating func peekSignificant() throws(ParseError) -> UInt8 {
            skipWhitespace()
            guard index < bytes.count else { throw Self.endOfFile }
            return bytes[index]
        }

        mutating func parseValue() throws(ParseError) -> JSONValue {
            switch try peekSignificant() {
            case 0x22: return .string(try parseString())
            case 0x7B: return try parseObject()
            case 0x5B: return try parseArray()
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            case UInt8(ascii: "-"), 0x30...0x39: return try parseNumber()
            default: throw Self.invalid(index)
            }
        }

        mutating func expectLiteral(_ word: String) throws(ParseError) {
            let expected = Array(word.utf8)
            guard bytes[index...].starts(with: expected) else { throw Self.endOfFile }
            index += expected.count
        }

        mutating func enter() throws(ParseError) {
            guard depth < JSONValue.maximumDepth else {
                throw ParseError(description: "Too many nested arrays or dictionaries around character \(index + 1).", isNestedTooDeeply: true)
            }
            depth += 1
        }

        mutating func parseArray() throws(ParseError) -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            var elements: [JSONValue] = []
            if try peekSignificant() == 0x5D {
                index += 1
                return .array(elements)
            }
            while true {
                elements.append(try parseValue())
                switch try peekSignificant() {
                case 0x5D:
                    index += 1
                    return .array(elements)
                case 0x2C:
                    index += 1
                    // JSONSerialization accepts a trailing comma.
                    if try peekSignificant() == 0x5D {
                        index += 1
                        return .array(elements)
                    }
                default: throw Self.invalid(index)
                }
            }
        }

        mutating func parseObject() throws(ParseError) -> JSONValue {
            try enter()
            defer { depth -= 1 }
            index += 1
            var fields: [String: JSONValue] = [:]
            if try peekSignificant() == 0x7D {
                index += 1
                return .object(fields)
            }
            while true {
                guard try peekSignificant() == 0x22 else { throw Self.invalid(index) }
                let key = try parseString()
                guard try peekSignificant() == 0x3A else { throw Self.invalid(index) }
                index += 1
                fields[key] = try parseValue()
                switch try peekSignificant() {
                case 0x7D:
                    index += 1
                    return .object(fields)
                case 0x2C:
                    index += 1
                    if try peekSignificant() == 0x7D {
                        index += 1
                        return .object(fields)
                    }
                default: throw Self.invalid(index)
                }
            }
        }

        mutating func parseNumber() throws(ParseError) -> JSONValue {
            let start = index
            var isInteger = true
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func isDigit(_ at: Int) -> Bool { at < bytes.count && (0x30...0x39).contains(bytes[at]) }
            guard isDigit(index) else { throw index < bytes.count ? Self.invalid(index) : Self.endOfFile }
            if bytes[index] == 0x30 {
                index += 1
                if isDigit(index) { throw ParseError(description: "Number with leading zero around character \(index).") }
            } else {
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard isDigit(index) else { throw index < bytes.count ? Self.invalid(index) : Self.endOfFile }
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard isDigit(index) else { throw index < bytes.count ? Self.invalid(index) : Self.endOfFile }
                while isDigit(index) { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let number = Double(text), number.isFinite else {
                throw ParseError(description: "Number \(text) is not representable in Swift.")
            }
            return .double(number)
        }

        mutating func parseString() throws(ParseError) -> String {
            index += 1
            var output: [UInt8] = []
            var runStart = index
            func flush(_ end: Int) throws(ParseError) {
                guard String(validating: bytes[runStart..<end], as: UTF8.self) != nil else {
                    // Foundation names the whole run of unescaped bytes the bad sequence is in.
                    throw ParseError(description: "Invalid UTF-8 sequence \(end - runStart) bytes starting from character \(runStart).")
                }
                output += bytes[runStart..<end]
            }
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case 0x22:
                    try flush(index)
                    index += 1
                    return String(decoding: output, as: UTF8.self)
                case 0..<0x20:
                    throw ParseError(description: "Unescaped control character around character \(index).")
                case 0x5C:
                    try flush(index)
                    try parseEscape(into: &output)
                    runStart = index
                default:
                    index += 1
                }
            }
            throw Self.endOfFile
        }

        /// At a backslash: appends the escaped character's UTF-8.
        mutating func parseEscape(into output: inout [UInt8]) throws(ParseError) {
            let backslash = index
            index += 1
            guard index < bytes.count else { throw Self.endOfFile }
            let letter = bytes[index]
            index += 1
            switch letter {
            case 0x22, 0x5C, 0x2F: output.append(letter)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                let high = try hexQuad()
                var scalar: Unicode.Scalar?
                if (0xD800...0xDBFF).contains(high) {
                    let lowSurrogateMissing = ParseError(
                        description: "Unexpected end of file during string parse (expected low-surrogate code point but did not find one).")
                    guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == UInt8(ascii: "u") else { throw lowSurrogateMissing }
                    index += 2
                    let low = try hexQuad()
                    guard (0xDC00...0xDFFF).contains(low) else { throw lowSurrogateMissing }
                    scalar = Unicode.Scalar(0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
                } else if (0xDC00...0xDFFF).contains(high) {
                    throw ParseError(description: "Unable to convert hex escape sequence (no high character) to UTF8-encoded character.")
                } else {
                    scalar = Unicode.Scalar(high)
                }
                guard let scalar else { throw Self.invalid(backslash) }
                output += Array(String(scalar).utf8)
            default:
                throw ParseError(description: "Invalid escape sequence around character \(backslash).")
            }
        }

        /// Four hex digits after `\u`.
        mutating func hexQuad() throws(ParseError) -> UInt16 {
            guard index + 4 <= bytes.count else { throw Self.endOfFile }
            let quad = bytes[index..<index + 4]
            guard let value = UInt16(String(decoding: quad, as: UTF8.self), radix: 16), quad.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else {
                throw ParseError(description: "Invalid hex encoded sequence in \"\(String(decoding: quad, as: UTF8.self))\" at \(index).")
            }
            index += 4
            return value
        }
    }
}

// MARK: - Codable

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .integer(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .integer(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let fields): try container.encode(fields)
        }
    }
}
