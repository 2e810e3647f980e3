import FoundationEssentials
import MapGateBase

/// A parsed minisign signature file (`.minisig`), not yet verified.
///
/// ```
/// untrusted comment: <text>
/// base64(algorithm (2) ‖ key id (8) ‖ Ed25519 signature (64))
/// trusted comment: <text>
/// base64(Ed25519 signature (64) of: the signature above ‖ the trusted comment's bytes)
/// ```
///
/// Algorithm `ED` (minisign's default) signs the 64-byte BLAKE2b digest of the file; `Ed`
/// (legacy, `minisign -S -l`) signs the file's bytes themselves. Parsing follows minisign 0.11:
/// LF or CRLF line ends, no end needed after line 4, anything after line 4 ignored, the same line
/// length limits. It is stricter in two places: the trusted comment must be UTF-8, and a CR or NUL
/// inside a line (where minisign would silently cut it) is refused.
public struct MinisignSignature: Hashable, Sendable {
    /// What the Ed25519 signature on line 2 covers.
    public enum Algorithm: String, Sendable {
        /// `Ed`: the message bytes themselves (`minisign -S -l`).
        case legacy = "Ed"
        /// `ED`: the 64-byte BLAKE2b digest of the message (minisign's default).
        case prehashed = "ED"

        /// Two algorithm bytes for a message: quoted when printable, in hex otherwise.
        static func describe(_ bytes: some Collection<UInt8>) -> String {
            if bytes.allSatisfy({ (0x21...0x7E).contains($0) }) {
                return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
            }
            return "0x" + bytes.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
        }
    }

    /// A `.minisig` larger than this is refused unread. minisign's own limits (a 1 KiB untrusted
    /// comment line, an 8 KiB trusted comment line) keep a real one under 10 KiB.
    public static let maximumFileSize = 64 << 10

    static let untrustedCommentPrefix = "untrusted comment: "
    static let trustedCommentPrefix = "trusted comment: "
    /// minisign reads line 1 with `fgets` into 1024 bytes: the line and its LF must fit in 1023.
    static let maximumUntrustedCommentLineLength = 1022
    /// minisign reads line 3 into 8192 bytes: the line and its LF must fit in 8191.
    static let maximumTrustedCommentLineLength = 8190
    static let encodedSignatureLength = 2 + 8 + 64

    public let algorithm: Algorithm
    /// The id of the key that made the signature.
    public let keyID: MinisignKeyID
    /// Line 1 after `untrusted comment: `. Anyone can change it; do not rely on it.
    public let untrustedComment: String
    /// Line 3 after `trusted comment: `. Signed, but only trustworthy once the signature verified:
    /// read it from the ``MinisignVerification`` that ``MinisignVerifier`` returns.
    public let trustedComment: String
    /// The Ed25519 signature of the message (or of its BLAKE2b digest).
    let signature: [UInt8]
    /// The Ed25519 signature of `signature ‖ trustedComment`.
    let globalSignature: [UInt8]

    init(
        algorithm: Algorithm, keyID: MinisignKeyID, untrustedComment: String, trustedComment: String,
        signature: [UInt8], globalSignature: [UInt8]
    ) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.untrustedComment = untrustedComment
        self.trustedComment = trustedComment
        self.signature = signature
        self.globalSignature = globalSignature
    }

    /// Parses a `.minisig` file's bytes. Throws ``SignatureError`` naming the line that is missing
    /// or malformed, or the unknown algorithm.
    public init(data: Data) throws {
        guard !data.isEmpty else { throw SignatureError.signatureFileEmpty }
        guard data.count <= Self.maximumFileSize else {
            throw SignatureError.signatureFileTooLarge(byteCount: data.count, limit: Self.maximumFileSize)
        }
        let lines = MinisignLines([UInt8](data))
        func line(_ number: Int) throws -> MinisignLines.Line {
            guard let line = lines.line(number) else { throw SignatureError.signatureFileTruncated(missingLine: number) }
            if line.hasControlBreak {
                throw SignatureError.signatureLineMalformed(line: number, problem: L.localized("it contains a carriage return or a NUL byte"))
            }
            return line
        }

        let commentLine = try line(1)
        guard commentLine.hasPrefix(Self.untrustedCommentPrefix) else {
            throw SignatureError.signatureLineMalformed(line: 1, problem: L.localized("it does not start with \"untrusted comment: \""))
        }
        guard commentLine.rawLength <= Self.maximumUntrustedCommentLineLength else {
            throw SignatureError.signatureLineMalformed(
                line: 1, problem: L.localized("it is longer than the %1$s bytes minisign reads", "\(Self.maximumUntrustedCommentLineLength)"))
        }

        let encoded = try Self.base64(try line(2), line: 2, expectedLength: Self.encodedSignatureLength)
        guard let algorithm = Algorithm(rawValue: String(decoding: encoded.prefix(2), as: UTF8.self)) else {
            throw SignatureError.unknownAlgorithm(Algorithm.describe(encoded.prefix(2)))
        }

        let trustedLine = try line(3)
        guard trustedLine.hasPrefix(Self.trustedCommentPrefix) else {
            throw SignatureError.signatureLineMalformed(line: 3, problem: L.localized("it does not start with \"trusted comment: \""))
        }
        guard trustedLine.rawLength <= Self.maximumTrustedCommentLineLength else {
            throw SignatureError.signatureLineMalformed(
                line: 3, problem: L.localized("it is longer than the %1$s bytes minisign reads", "\(Self.maximumTrustedCommentLineLength)"))
        }
        guard let trustedComment = String(validating: trustedLine.dropping(Self.trustedCommentPrefix), as: UTF8.self) else {
            throw SignatureError.signatureLineMalformed(line: 3, problem: L.localized("the trusted comment is not UTF-8 text"))
        }

        let globalSignature = try Self.base64(try line(4), line: 4, expectedLength: Ed25519Key.signatureLength)

        self.init(
            algorithm: algorithm, keyID: MinisignKeyID(bytes: encoded[2..<10]),
            untrustedComment: String(decoding: commentLine.dropping(Self.untrustedCommentPrefix), as: UTF8.self),
            trustedComment: trustedComment, signature: Array(encoded[10...]), globalSignature: globalSignature)
    }

    /// Parses a `.minisig` file's text; see ``init(data:)``.
    public init(text: String) throws {
        try self.init(data: Data(text.utf8))
    }

    private static func base64(_ line: MinisignLines.Line, line number: Int, expectedLength: Int) throws -> [UInt8] {
        guard let decoded = Data(base64Encoded: line.text) else {
            throw SignatureError.signatureLineMalformed(line: number, problem: L.localized("it is not base64"))
        }
        guard decoded.count == expectedLength else {
            throw SignatureError.signatureLineMalformed(
                line: number, problem: L.localized("it holds %1$s bytes instead of %2$s", "\(decoded.count)", "\(expectedLength)"))
        }
        return [UInt8](decoded)
    }

    /// The signature file as minisign writes it (LF line ends, each line ended).
    public var text: String {
        let encoded = Data(Array(algorithm.rawValue.utf8) + keyID.bytes + signature).base64EncodedString()
        return Self.untrustedCommentPrefix + untrustedComment + "\n" + encoded + "\n"
            + Self.trustedCommentPrefix + trustedComment + "\n" + Data(globalSignature).base64EncodedString() + "\n"
    }

    /// Calls `body` with the bytes the line-2 signature covers for `message`: the message itself
    /// (not copied), or its BLAKE2b-512 digest.
    func withSignedBytes<Result>(of message: Data, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        switch algorithm {
        case .legacy: try message.withUnsafeBytes(body)
        case .prehashed: try BLAKE2bHasher.digest512(of: message).withUnsafeBytes(body)
        }
    }

    /// The bytes the line-4 signature covers: the line-2 signature, then the trusted comment.
    var globallySignedBytes: [UInt8] {
        signature + Array(trustedComment.utf8)
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
