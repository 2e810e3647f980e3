import FoundationEssentials
import MapGateBase

/// The layer names of Mapbox Vector Tiles (MVT), read from the tiles themselves: for a `pbf`
/// region whose metadata lists no `vector_layers`.
///
/// An MVT tile is a protobuf `Tile` whose field 3 (`layers`, length-delimited, repeated) holds
/// `Layer` messages, each with its `name` in field 1 (a string). Tiles may be gzip-compressed.
/// Only the wire format is read: every other field is skipped by its wire type.
public enum VectorTileLayers {
    /// A tile that is not a readable MVT tile.
    public struct DecodingError: Error, Sendable, Equatable {
        public var reason: String
    }

    /// The largest tile inflated (a gzip bomb is not unpacked for a layer name).
    public static let maximumTileSize = 64 << 20

    /// The layer names of one tile, in order, each once (an empty name is left out).
    public static func names(inTile bytes: Data) throws(DecodingError) -> [String] {
        var data = bytes
        if GzipInflater.isGzip(bytes) || GzipInflater.isZlib(bytes) {
            do {
                data = try GzipInflater.decompress(bytes, maximumSize: maximumTileSize)
            } catch {
                throw DecodingError(reason: L.localized("cannot unpack a gzip-compressed tile: %1$s", "\(error)"))
            }
        }
        var names: [String] = []
        var reader = ProtobufReader(Array(data))
        while let (field, wireType) = try reader.key() {
            if field == 3, wireType == 2 {
                var layer = ProtobufReader(try reader.lengthDelimited())
                while let (layerField, layerWireType) = try layer.key() {
                    if layerField == 1, layerWireType == 2 {
                        let name = String(decoding: try layer.lengthDelimited(), as: UTF8.self)
                        if !name.isEmpty, !names.contains(name) { names.append(name) }
                    } else {
                        try layer.skip(wireType: layerWireType)
                    }
                }
            } else {
                try reader.skip(wireType: wireType)
            }
        }
        return names
    }

    /// Protobuf's wire format, just enough to walk messages.
    private struct ProtobufReader {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func varint() throws(DecodingError) -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                guard offset < bytes.count else { throw DecodingError(reason: L.localized("a varint runs past the end of the tile")) }
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << UInt64(shift)
                if byte & 0x80 == 0 { return value }
            }
            throw DecodingError(reason: L.localized("a varint is longer than 10 bytes"))
        }

        /// The next field number and wire type; nil at the end.
        mutating func key() throws(DecodingError) -> (UInt64, UInt64)? {
            guard offset < bytes.count else { return nil }
            let key = try varint()
            // Field numbers start at 1: a zero key ends the walk at once (a tile of zeros, such as
            // an inflated gzip bomb, would otherwise be walked one byte at a time).
            guard key >> 3 != 0 else { throw DecodingError(reason: L.localized("field number 0 is not protobuf's")) }
            return (key >> 3, key & 7)
        }

        mutating func lengthDelimited() throws(DecodingError) -> [UInt8] {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw DecodingError(reason: L.localized("a field runs past the end of the tile")) }
            defer { offset += Int(length) }
            return Array(bytes[offset..<offset + Int(length)])
        }

        mutating func skip(wireType: UInt64) throws(DecodingError) {
            switch wireType {
            case 0: _ = try varint()
            case 1: try advance(8)
            case 2: _ = try lengthDelimited()
            case 5: try advance(4)
            default: throw DecodingError(reason: L.localized("wire type %1$s is not protobuf's", "\(wireType)"))
            }
        }

        mutating func advance(_ count: Int) throws(DecodingError) {
            guard count <= bytes.count - offset else { throw DecodingError(reason: L.localized("a field runs past the end of the tile")) }
            offset += count
        }
    }
}
