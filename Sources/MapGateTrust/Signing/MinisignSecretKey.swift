import CCrypto
import FoundationEssentials

/// A minisign secret key, read from the file `minisign -G` writes, ready to sign.
///
/// The file is an `untrusted comment:` line, then base64 of 158 bytes:
///
/// ```
/// "Ed" (2) ‖ KDF: "Sc" or 0x0000 (2) ‖ checksum: "B2" (2) ‖ scrypt salt (32)
/// ‖ opslimit (8, LE) ‖ memlimit (8, LE)
/// ‖ key id (8) ‖ Ed25519 secret key: seed (32) ‖ public key (32) ‖ checksum (32)
/// ```
///
/// With KDF `Sc` the last 104 bytes are XORed with scrypt output from the password (libsodium's
/// `crypto_pwhash_scryptsalsa208sha256`); `-W` keys (KDF 0x0000) are stored as they are. The
/// checksum is BLAKE2b-256 of `"Ed" ‖ key id ‖ secret key`; minisign writes zeros there for `-W`
/// keys and checks it only when decrypting.
///
/// How a wrong password is caught: the public half of the decrypted secret key must be the public
/// key libcrypto derives from its seed (true of every minisign key, and a 2^-256 chance for a
/// wrong password). Where libcrypto can compute BLAKE2b-256 (OpenSSL 3.2 and later) the checksum
/// is checked as well; ``hasVerifiedChecksum`` says whether it was.
///
/// Not `Sendable`: it owns a libcrypto key, used by one thread at a time.
public struct MinisignSecretKey {
    /// The id of the key pair, written into every signature.
    public let keyID: MinisignKeyID
    /// The matching public key.
    public let publicKey: MinisignPublicKey
    /// Whether the file was encrypted with a password.
    public let isPasswordProtected: Bool
    /// Whether the file's BLAKE2b-256 checksum was computed and matched (see the type's notes).
    public let hasVerifiedChecksum: Bool
    private let signingKey: Ed25519Key

    /// Whether this libcrypto can compute BLAKE2b-256, and so check secret key checksums
    /// (OpenSSL 3.2 and later). Without it, a wrong password is still caught; see the type's notes.
    public static var canVerifyChecksums: Bool { BLAKE2bHasher.isShortDigestAvailable }

    /// The untrusted comment ``sign(message:trustedComment:untrustedComment:)`` writes by default.
    public static let defaultUntrustedComment = "signature from mapgate secret key"

    static let encodedLength = 158
    static let signatureAlgorithm: [UInt8] = Array("Ed".utf8)
    static let scryptKDF: [UInt8] = Array("Sc".utf8)
    static let noKDF: [UInt8] = [0, 0]
    static let checksumAlgorithm: [UInt8] = Array("B2".utf8)
    /// The encrypted part: key id (8) ‖ secret key (64) ‖ checksum (32).
    static let encryptedRange = 54..<158

    /// Reads a secret key file (its whole text, or only the base64 line), decrypting it with
    /// `password` when it is encrypted. Decrypting takes a few seconds and 1 GiB of memory for
    /// a key made by `minisign -G`: scrypt is meant to be that expensive.
    ///
    /// Throws ``SignatureError/passwordRequired``, ``SignatureError/wrongPassword``,
    /// or ``SignatureError/secretKeyMalformed(_:)``.
    public init(text: String, password: String?) throws {
        guard text.utf8.count <= MinisignPublicKey.maximumTextLength else {
            throw SignatureError.secretKeyMalformed("\(text.utf8.count) bytes is far more than a key file holds")
        }
        guard let payload = MinisignLines(text).keyPayload() else {
            throw SignatureError.secretKeyMalformed(
                "expected a minisign secret key file (an \"untrusted comment:\" line, then the key)")
        }
        guard let decoded = Data(base64Encoded: payload) else {
            throw SignatureError.secretKeyMalformed("the key line is not base64")
        }
        var bytes = [UInt8](decoded)
        defer { Self.erase(&bytes) }
        guard bytes.count == Self.encodedLength else {
            throw SignatureError.secretKeyMalformed(
                "the key line holds \(bytes.count) bytes, a minisign secret key has \(Self.encodedLength)")
        }
        let algorithm = Array(bytes[0..<2])
        let kdf = Array(bytes[2..<4])
        guard algorithm == Self.signatureAlgorithm else {
            throw SignatureError.secretKeyMalformed(
                "unsupported signature algorithm \(MinisignSignature.Algorithm.describe(algorithm))")
        }
        guard bytes[4..<6].elementsEqual(Self.checksumAlgorithm) else {
            throw SignatureError.secretKeyMalformed(
                "unsupported checksum algorithm \(MinisignSignature.Algorithm.describe(bytes[4..<6]))")
        }

        let isEncrypted: Bool
        switch kdf {
        case Self.scryptKDF: isEncrypted = true
        case Self.noKDF: isEncrypted = false
        default:
            throw SignatureError.secretKeyMalformed(
                "unsupported key derivation function \(MinisignSignature.Algorithm.describe(kdf))")
        }
        if isEncrypted {
            guard let password else { throw SignatureError.passwordRequired }
            try Self.decrypt(&bytes, password: password)
        }

        let keyID = MinisignKeyID(bytes: bytes[54..<62])
        var seed = Array(bytes[62..<94])
        defer { Self.erase(&seed) }
        let storedPublicKey = Array(bytes[94..<126])
        let storedChecksum = Array(bytes[126..<158])
        let damaged: (String) -> SignatureError = { problem in
            // With a wrong password every decrypted byte is noise, the key id included.
            isEncrypted ? .wrongPassword : .secretKeyMalformed(problem)
        }

        let signingKey = try Ed25519Key(seed: seed)
        guard try signingKey.publicKeyBytes() == storedPublicKey else {
            throw damaged("its public half is not the public key of its seed (the file is damaged)")
        }
        // minisign leaves the checksum of a -W key zero and never checks it; a key whose password
        // `minisign -C -W` removed keeps the real one.
        let hasChecksum = isEncrypted || storedChecksum.contains { $0 != 0 }
        var hasVerifiedChecksum = false
        if hasChecksum, BLAKE2bHasher.isShortDigestAvailable {
            let hasher = try BLAKE2bHasher(digestLength: 32)
            try hasher.update(algorithm)
            try hasher.update(Array(bytes[54..<126]))
            var checksum = try hasher.finalize()
            defer { Self.erase(&checksum) }
            guard ccrypto_CRYPTO_memcmp(checksum, storedChecksum, checksum.count) == 0 else {
                throw damaged("its checksum does not match its contents (the file is damaged)")
            }
            hasVerifiedChecksum = true
        }

        self.keyID = keyID
        self.publicKey = MinisignPublicKey(keyID: keyID, keyBytes: storedPublicKey)
        self.isPasswordProtected = isEncrypted
        self.hasVerifiedChecksum = hasVerifiedChecksum
        self.signingKey = signingKey
    }

    /// Signs `message` as `minisign -S` does (algorithm `ED`: the BLAKE2b-512 digest of the
    /// message is signed) and returns the whole `.minisig` text, which `minisign -V` verifies.
    ///
    /// The comments must be one line each (no CR, LF or NUL) and fit minisign's limits (a trusted
    /// comment of at most 8173 bytes, an untrusted one of at most 1003); otherwise this throws
    /// ``SignatureError/commentInvalid(_:)``.
    public func sign(
        message: Data, trustedComment: String, untrustedComment: String = defaultUntrustedComment
    ) throws -> String {
        try Self.check(comment: untrustedComment, named: "untrusted comment", prefix: MinisignSignature.untrustedCommentPrefix,
                       lineLimit: MinisignSignature.maximumUntrustedCommentLineLength)
        try Self.check(comment: trustedComment, named: "trusted comment", prefix: MinisignSignature.trustedCommentPrefix,
                       lineLimit: MinisignSignature.maximumTrustedCommentLineLength)
        let digest = try BLAKE2bHasher.digest512(of: message)
        let messageSignature = try signingKey.signature(of: digest)
        let globalSignature = try signingKey.signature(of: messageSignature + Array(trustedComment.utf8))
        let signature = MinisignSignature(
            algorithm: .prehashed, keyID: keyID, untrustedComment: untrustedComment, trustedComment: trustedComment,
            signature: messageSignature, globalSignature: globalSignature)
        // As minisign does: make sure the public key verifies what was just signed.
        _ = try publicKey.verify(signature: signature, message: message)
        return signature.text
    }

    private static func check(comment: String, named name: String, prefix: String, lineLimit: Int) throws {
        if comment.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
            throw SignatureError.commentInvalid("the \(name) must be one line, without CR, LF or NUL")
        }
        let limit = lineLimit - prefix.utf8.count
        if comment.utf8.count > limit {
            throw SignatureError.commentInvalid(
                "the \(name) is \(comment.utf8.count) bytes, more than the \(limit) minisign reads")
        }
    }

    /// XORs the encrypted part of `bytes` with scrypt output from the password, salt and limits
    /// stored in `bytes`.
    private static func decrypt(_ bytes: inout [UInt8], password: String) throws {
        let parameters = ScryptParameters(
            opsLimit: littleEndian64(bytes[38..<46]), memLimit: littleEndian64(bytes[46..<54]))
        var stream = try parameters.deriveKey(
            password: Array(password.utf8), salt: Array(bytes[6..<38]), length: encryptedRange.count)
        defer { erase(&stream) }
        for (offset, index) in encryptedRange.enumerated() {
            bytes[index] ^= stream[offset]
        }
    }

    private static func littleEndian64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Overwrites key material before the memory goes back (best effort: Swift may have copied it).
    private static func erase(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { ccrypto_OPENSSL_cleanse(base, buffer.count) }
        }
    }
}

// A compiler message for developers (not translated: never shown to users).
@available(*, unavailable, message: "a secret key owns a libcrypto key used by one thread at a time")
extension MinisignSecretKey: Sendable {}
