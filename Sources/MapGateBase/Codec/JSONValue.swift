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
