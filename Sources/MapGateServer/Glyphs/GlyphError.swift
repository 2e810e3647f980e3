import FoundationEssentials
import MapGateBase

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
        case .fontUnreadable(let path, let reason): L.localized("font %1$s: %2$s", "\(path)", "\(reason)")
        case .unknownFont(let name, let available):
            L.localized("no font named \"%1$s\" (fonts: %2$s%3$s)", "\(name)", "\(available.prefix(8).joined(separator: ", "))", "\(available.count > 8 ? ", …" : "")")
        case .badRange(let text): L.localized("glyph range %1$s is not START-END with START a multiple of 256 and END = START + 255, below 65536", "\(text)")
        }
    }
}
