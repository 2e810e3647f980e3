import FoundationEssentials

/// Encodes an `Encodable` value as a ``JSONValue``, with one difference from `JSONEncoder`: an
/// optional that is `nil` is written as `null`, not left out, so that a `--json` line has the
/// same keys for every outcome (docs/commands.md) from a plain `Encodable` struct.
public enum JSONValueEncoder {
    public static func encode(_ value: some Encodable) throws -> JSONValue {
        let root = Node()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        return root.value
    }
}

/// A value being built; containers write into it by reference.
private final class Node {
    enum Content {
        case unset
        case value(JSONValue)
        case object([(String, Node)])
        case array([Node])
    }

    var content = Content.unset

    var value: JSONValue {
        switch content {
        case .unset: .null
        case .value(let value): value
        case .object(let fields): .object(Dictionary(fields.map { ($0.0, $0.1.value) }) { _, last in last })
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    func child(forKey key: String) -> Node {
        let child = Node()
        if case .object(var fields) = content {
            fields.append((key, child))
            content = .object(fields)
        } else {
            content = .object([(key, child)])
        }
        return child
    }

    func appended() -> Node {
        let child = Node()
        if case .array(var elements) = content {
            elements.append(child)
            content = .array(elements)
        } else {
            content = .array([child])
        }
        return child
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: node, codingPath: codingPath)
    }
}

/// The JSON value of a primitive, or nil for any other type (encoded through its own `encode(to:)`).
private func primitive(_ value: some Encodable) -> JSONValue? {
    switch value {
    case let value as JSONValue: value
    case let value as String: .string(value)
    case let value as Bool: .bool(value)
    case let value as Int: .integer(Int64(value))
    case let value as Int64: .integer(value)
    case let value as Int32: .integer(Int64(value))
    case let value as UInt32: .integer(Int64(value))
    case let value as Double: value.isFinite ? .double(value) : .null
    default: nil
    }
}

private func encode(_ value: some Encodable, into node: Node, codingPath: [any CodingKey]) throws {
    if let primitive = primitive(value) {
        node.content = .value(primitive)
    } else {
        try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.null) }

    // The common field types, without the dynamic casts of the generic path (a `--json` line
    // of `catalog` is written 50,000 times over).
    mutating func encode(_ value: String, forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.string(value)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.bool(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.integer(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { node.child(forKey: key.stringValue).content = .value(.integer(Int64(value))) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        node.child(forKey: key.stringValue).content = .value(value.isFinite ? .double(value) : .null)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try MapGateBase.encode(value, into: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }

    // `nil` is written as `null` (the point of this encoder), for every type.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return try encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.child(forKey: "super"), codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int {
        if case .array(let elements) = node.content { return elements.count }
        return 0
    }

    mutating func encodeNil() throws { node.appended().content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try MapGateBase.encode(value, into: node.appended(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.appended(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appended(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.appended(), codingPath: codingPath) }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try MapGateBase.encode(value, into: node, codingPath: codingPath)
    }
}
