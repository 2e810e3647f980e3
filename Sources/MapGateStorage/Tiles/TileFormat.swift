import FoundationEssentials
import MapGateBase

/// The encoding of a region's tiles.
public enum TileFormat: String, Sendable, CaseIterable, Codable {
    case png, jpg, webp, pbf

    /// The MIME type served for it.
    public var contentType: String {
        switch self {
        case .png: "image/png"
        case .jpg: "image/jpeg"
        case .webp: "image/webp"
        case .pbf: "application/x-protobuf"
        }
    }

    /// Reads a `format` metadata value (`jpeg` is accepted for `jpg`).
    public init?(metadata value: String) {
        switch value.lowercased() {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpg
        case "webp": self = .webp
        case "pbf", "mvt": self = .pbf
        default: return nil
        }
    }

    /// Recognises a tile by its first bytes: PNG, JPEG, WebP, or gzip (a compressed `pbf`).
    public init?(sniffing bytes: Data) {
        let b = [UInt8](bytes.prefix(12))
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            self = .png
        } else if b.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpg
        } else if b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) {
            self = .webp
        } else if b.starts(with: [0x1F, 0x8B]) {
            self = .pbf
        } else {
            return nil
        }
    }

    /// Whether a tile's bytes can be of this format: PNG, JPEG and WebP by their magic bytes; a
    /// `pbf` tile gzip- or zlib-compressed, or a raw protobuf `Tile` (whose only field is 3,
    /// `layers`: the first byte is 0x1A), or empty (a tile with no layers).
    public func admits(_ bytes: Data) -> Bool {
        let sniffed = TileFormat(sniffing: bytes)
        switch self {
        case .pbf: return sniffed == .pbf || bytes.isEmpty || bytes.first == 0x1A || GzipInflater.isZlib(bytes)
        case .png, .jpg, .webp: return sniffed == self
        }
    }

    /// What a tile's bytes look like, for an error: a format's name, `gzip`, `protobuf` or the
    /// first bytes in hex.
    public static func describe(_ bytes: Data) -> String {
        if bytes.isEmpty { return L.localized("empty") }
        if let sniffed = TileFormat(sniffing: bytes) { return sniffed == .pbf ? "gzip (pbf)" : sniffed.rawValue }
        // (not translated: format names)
        if bytes.first == 0x1A { return "protobuf (pbf)" }
        // (not translated: format names)
        if GzipInflater.isZlib(bytes) { return "zlib (pbf)" }
        return L.localized("unknown bytes %1$s", bytes.prefix(4).map { String.hex($0, uppercase: true) }.joined(separator: " "))
    }
}
