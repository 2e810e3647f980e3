import FoundationEssentials

/// A minisign public key: the algorithm `Ed`, an 8-byte key id and a 32-byte Ed25519 public key,
/// written as one base64 line (`RW…`), in a `.pub` file under an `untrusted comment:` line.
public struct MinisignPublicKey: Hashable, Sendable {
    /// The id of the key pair; signatures carry it to say which key made them.
    public let keyID: MinisignKeyID
    /// The raw Ed25519 public key.
    let keyBytes: [UInt8]

    static let algorithm: [UInt8] = Array("Ed".utf8)
    static let encodedLength = 2 + 8 + 32
    /// More text than any key file holds is refused before it is read.
    static let maximumTextLength = 64 << 10

    init(keyID: MinisignKeyID, keyBytes: [UInt8]) {
        self.keyID = keyID
        self.keyBytes = keyBytes
    }

    /// Reads a public key: the bare base64 line minisign prints (`RW…`, what `minisign -P` takes),
    /// or a whole `.pub` file with its `untrusted comment:` line. CRLF line ends are accepted.
    ///
    /// Throws ``SignatureError/publicKeyMalformed(_:)``.
    public init(text: String) throws {
        guard text.utf8.count <= Self.maximumTextLength else {
            throw SignatureError.publicKeyMalformed("\(text.utf8.count) bytes is far more than a key file holds")
        }
        guard let payload = MinisignLines(text).keyPayload() else {
            throw SignatureError.publicKeyMalformed(
                "expected one base64 line (RW…) or a .pub file (an \"untrusted comment:\" line, then the key)")
        }
        guard let decoded = Data(base64Encoded: payload) else {
            throw SignatureError.publicKeyMalformed("the key line is not base64")
        }
        let bytes = [UInt8](decoded)
        guard bytes.count == Self.encodedLength else {
            throw SignatureError.publicKeyMalformed("the key line holds \(bytes.count) bytes, a minisign key has \(Self.encodedLength)")
        }
        guard bytes.prefix(2).elementsEqual(Self.algorithm) else {
            throw SignatureError.publicKeyMalformed(
                "unsupported algorithm \(MinisignSignature.Algorithm.describe(bytes.prefix(2))) (minisign keys are \"Ed\")")
        }
        self.init(keyID: MinisignKeyID(bytes: bytes[2..<10]), keyBytes: Array(bytes[10...]))
    }

    /// The key as one base64 line (`RW…`), the form `minisign -P` takes.
    public var base64: String {
        Data(Self.algorithm + keyID.bytes + keyBytes).base64EncodedString()
    }

    /// The key as minisign writes a `.pub` file.
    public var fileText: String {
        "untrusted comment: minisign public key \(keyID.hex)\n\(base64)\n"
    }

    /// Checks `signature` against `message` with this key alone; see
    /// ``MinisignVerifier/verify(signature:message:)``.
    public func verify(signature: MinisignSignature, message: Data) throws -> MinisignVerification {
        try MinisignVerifier(trustedKeys: [self]).verify(signature: signature, message: message)
    }
}
