import FoundationEssentials

// The parser: what `JSONSerialization` accepts, its errors worded as it words them.

extension JSONValue {
    /// Why a text is not JSON, worded as `JSONSerialization` words it (its `NSDebugDescription`).
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        /// The document nests more than ``JSONValue/maximumDepth`` arrays or objects.
        public var isNestedTooDeeply = false
        /// The byte where the text stops being JSON, when the parser says one.
        public var offset: Int?
        /// The text ends before the document does.
        public var isEndOfFile = false

        /// Why, in the user's language and for a person who edits the file by hand: the line and
        /// column where the text stops being JSON in `data` (the document parsed), or that it
        /// ends too soon (found by an attack: "Invalid value around character 54." in English, a
        /// byte count, in every language).
        public func explanation(in data: some Collection<UInt8>) -> String {
            if isNestedTooDeeply {
                return L.localized("nested too deeply: more than %1$s arrays or objects inside each other (the limit)", "\(JSONValue.maximumDepth)")
            }
            if isEndOfFile { return L.localized("the text ends before the JSON does (a missing \"}\", \"]\" or quote?)") }
            guard let offset else { return description }
            let before = Array(data.prefix(offset))
            let line = before.count { $0 == 0x0A } + 1
            let start = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let column = String(decoding: before[start...], as: UTF8.self).count + 1
            return L.localized("unexpected text at line %1$s, column %2$s", "\(line)", "\(column)")
        }

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

    /// The first key that one object of the document holds twice (after unescaping), or nil. JSON
    /// readers disagree on which of the two values counts (Foundation's decoder takes the first,
    /// `JSONSerialization`, Python and jq the last): a signed document holding one means two
    /// things. Nil too for text that is not JSON, which its reader refuses anyway.
    public static func duplicateKey(in data: some Collection<UInt8>) -> String? {
        var parser = Parser(bytes: Array(data))
        parser.findsDuplicates = true
        _ = try? parser.parseDocument()
        return parser.duplicate
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var depth = 0
        /// ``JSONValue/duplicateKey(in:)``: stops at the first key an object holds twice, and
        /// keeps no values (only each open object's keys): a scan, not a second tree of the document.
        var findsDuplicates = false
        var duplicate: String?

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        static func invalid(_ index: Int) -> ParseError { ParseError(description: "Invalid value around character \(index).", offset: index) }
        static let endOfFile = ParseError(description: "Unexpected end of file during JSON parse.", isEndOfFile: true)

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
            case 0x22 where findsDuplicates:
                try skipString()
                return .null
            case 0x22: return .string(try parseString())
            case 0x7B where findsDuplicates:
                try scanObject()
                return .null
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
                let element = try parseValue()
                if !findsDuplicates { elements.append(element) }
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

        /// ``JSONValue/duplicateKey(in:)``'s object: its keys compared as the bytes between their
        /// quotes while none holds an escape and there are few (no string made, nothing hashed: a
        /// catalog's objects hold a dozen keys), as decoded strings in a set once one does
        /// (`"ser\u0069al"` is `"serial"`) or past 32 keys.
        mutating func scanObject() throws(ParseError) {
            try enter()
            defer { depth -= 1 }
            index += 1
            var raw: [Range<Int>] = []
            var decoded: Set<String>?
            if try peekSignificant() == 0x7D {
                index += 1
                return
            }
            while true {
                guard try peekSignificant() == 0x22 else { throw Self.invalid(index) }
                let quote = index
                try skipString()
                let range = (quote + 1)..<(index - 1)
                let escaped = bytes[range].contains(0x5C)
                if decoded == nil, escaped || raw.count >= 32 {
                    decoded = Set(raw.map { String(decoding: bytes[$0], as: UTF8.self) })
                }
                if decoded != nil {
                    var key = String(decoding: bytes[range], as: UTF8.self)
                    if escaped {
                        index = quote
                        key = try parseString()
                    }
                    guard decoded?.insert(key).inserted == true else {
                        duplicate = key
                        throw Self.invalid(index)
                    }
                } else {
                    if raw.contains(where: { $0.count == range.count && bytes[$0].elementsEqual(bytes[range]) }) {
                        duplicate = String(decoding: bytes[range], as: UTF8.self)
                        throw Self.invalid(index)
                    }
                    raw.append(range)
                }
                guard try peekSignificant() == 0x3A else { throw Self.invalid(index) }
                index += 1
                _ = try parseValue()
                switch try peekSignificant() {
                case 0x7D:
                    index += 1
                    return
                case 0x2C:
                    index += 1
                    if try peekSignificant() == 0x7D {
                        index += 1
                        return
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
            if findsDuplicates { return .null }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let number = Double(text), number.isFinite else {
                throw ParseError(description: "Number \(text) is not representable in Swift.")
            }
            return .double(number)
        }

        /// Past a string value without making it (``JSONValue/duplicateKey(in:)`` looks only at
        /// keys): to its closing quote, over escapes.
        mutating func skipString() throws(ParseError) {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case 0x22:
                    index += 1
                    return
                case 0x5C: index += 2
                default: index += 1
                }
            }
            throw Self.endOfFile
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
