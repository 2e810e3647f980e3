import FoundationEssentials

/// A font or glyph request that cannot be answered, with the reason.
public enum GlyphError: MapGateFailure, LocalizedError, Equatable {
    case fontUnreadable(path: String, reason: String)
    case unknownFont(name: String, available: [String])
    case badRange(String)

    public var kind: FailureKind {
        switch self {
        case .fontUnreadable: .io
        case .unknownFont, .badRange: .failure
        }
    }

    public var errorDescription: String? {
        switch self {
        case .fontUnreadable(let path, let reason): "font \(path): \(reason)"
        case .unknownFont(let name, let available):
            "no font named \"\(name)\" (fonts: \(available.prefix(8).joined(separator: ", "))\(available.count > 8 ? ", …" : ""))"
        case .badRange(let text): "glyph range \(text) is not START-END with START a multiple of 256 and END = START + 255, below 65536"
        }
    }
}
