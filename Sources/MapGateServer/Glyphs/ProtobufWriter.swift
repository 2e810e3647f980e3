import FoundationEssentials

/// Writes protocol buffer wire format, field by field (just what the glyph format needs:
/// varints, zig-zag signed varints, and length-delimited bytes and messages).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ field: Int, _ value: UInt64) {
        key(field, wireType: 0)
        append(varint: value)
    }

    /// A `sint32`: zig-zag encoded, so small negative numbers stay short.
    mutating func signed(_ field: Int, _ value: Int32) {
        varint(field, UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))))
    }

    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        key(field, wireType: 2)
        append(varint: UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ field: Int, _ value: String) {
        bytes(field, Array(value.utf8))
    }

    /// Fields encoded elsewhere, as they are.
    mutating func append(encoded fields: Data) {
        bytes.append(contentsOf: fields)
    }

    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        bytes(field, inner.bytes)
    }

    private mutating func key(_ field: Int, wireType: UInt64) {
        append(varint: UInt64(field) << 3 | wireType)
    }

    private mutating func append(varint value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
