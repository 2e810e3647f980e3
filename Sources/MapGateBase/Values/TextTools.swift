import FoundationEssentials
import Glibc

// The few string operations mapgate took from Foundation (which it no longer links: Foundation
// brings ICU), in one place.

extension Unicode.Scalar {
    /// `CharacterSet.whitespaces` (Foundation's set: tab, the Zs spaces and U+200B).
    public var isSpaceOrTab: Bool {
        switch value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// `CharacterSet.whitespacesAndNewlines`: those, U+000A–U+000D, U+0085, U+2028 and U+2029.
    public var isWhitespaceOrNewline: Bool {
        isSpaceOrTab || (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028 || value == 0x2029
    }

    /// `CharacterSet.alphanumerics`: categories L*, M* and N*.
    public var isAlphanumeric: Bool {
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default: return false
        }
    }
}

extension Unicode.Scalar {
    /// `CharacterSet.urlPathAllowed`: ASCII letters and digits and `!$&'()*+,-./:=@_~`.
    public var isURLPathAllowed: Bool {
        guard isASCII else { return false }
        return properties.isAlphabetic || (0x30...0x39).contains(value) || "!$&'()*+,-./:=@_~".unicodeScalars.contains(self)
    }
}

extension StringProtocol {
    /// A SHA-256 as mapgate writes it: 64 lower-case hex digits, ASCII only (`Character.isHexDigit`
    /// also accepts fullwidth digits, which no digest matches).
    public var isSHA256Hex: Bool {
        utf8.count == 64 && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `trimmingCharacters(in:)`: drops the leading and trailing scalars `trimmed` accepts.
    public func trimming(where trimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !trimmed($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !trimmed($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// `trimmingCharacters(in: .whitespaces)`.
    public func trimmingWhitespace() -> String { trimming(where: \.isSpaceOrTab) }

    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    public func trimmingWhitespaceAndNewlines() -> String { trimming(where: \.isWhitespaceOrNewline) }

    /// Whether the two are equal ignoring ASCII and Unicode case (`caseInsensitiveCompare` is
    /// `.orderedSame`), for header names.
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }

    /// `addingPercentEncoding(withAllowedCharacters:)`: every scalar that is not ASCII or that
    /// `allowed` refuses becomes its UTF-8 bytes as `%XX` (uppercase hex).
    public func percentEncoded(allowing allowed: (Unicode.Scalar) -> Bool) -> String {
        var result = ""
        for scalar in unicodeScalars {
            if scalar.isASCII, allowed(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { result += "%" + String.hex(byte, uppercase: true) }
            }
        }
        return result
    }
}

extension String {
    /// A byte as two hex digits (`String(format: "%02x")`).
    public static func hex(_ byte: UInt8, uppercase: Bool = false) -> String {
        let digits = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        let table = Array(digits.utf8)
        return String(decoding: [table[Int(byte >> 4)], table[Int(byte & 0xF)]], as: UTF8.self)
    }

    /// Bytes as hex digits, two per byte (`map { String(format: "%02x", $0) }.joined(separator:)`).
    public static func hex(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        bytes.map { hex($0, uppercase: uppercase) }.joined(separator: separator)
    }

    /// `String(format:)` for C's numeric conversions (`%.1f`, `%.4g`, `%02d`, `%02x`), through
    /// `vsnprintf` in the C locale (a `.` for the decimal point, as `String(format:)` gives).
    public init(cFormat format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 128)
        let needed = Int(withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) })
        if needed >= buffer.count {
            buffer = [CChar](repeating: 0, count: needed + 1)
            _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = String(cString: buffer)
    }
}
