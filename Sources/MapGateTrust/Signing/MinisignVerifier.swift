import FoundationEssentials

/// Checks minisign signatures against a set of trusted public keys.
///
/// Several keys allow rotation: a catalog signed by the old or the new key verifies while both are
/// trusted. The checks run in minisign's order, and the first that fails is the error:
/// the algorithm is known (when parsing), the key id is trusted, the signature matches the message
/// (or its BLAKE2b digest), and the second signature matches the trusted comment. Should two
/// trusted keys share an id, each is tried.
public struct MinisignVerifier: Sendable {
    public let trustedKeys: [MinisignPublicKey]
    /// Whether legacy (`Ed`, not prehashed) signatures are accepted; `minisign -V` accepts them
    /// unless given `-H`.
    public let acceptsLegacySignatures: Bool

    public init(trustedKeys: [MinisignPublicKey], acceptsLegacySignatures: Bool = true) {
        self.trustedKeys = trustedKeys
        self.acceptsLegacySignatures = acceptsLegacySignatures
    }

    /// Verifies `signature` over `message`: returns which trusted key made it, or throws
    /// ``SignatureError`` saying which check failed.
    public func verify(signature: MinisignSignature, message: Data) throws -> MinisignVerification {
        let candidates = trustedKeys.filter { $0.keyID == signature.keyID }
        guard !candidates.isEmpty else {
            throw SignatureError.unknownKeyID(signature.keyID, trusted: trustedKeys.map(\.keyID))
        }
        if signature.algorithm == .legacy, !acceptsLegacySignatures {
            throw SignatureError.legacySignatureRefused(keyID: signature.keyID)
        }
        // The message (or its digest, computed once) is checked against each key with that id.
        return try signature.withSignedBytes(of: message) { signedBytes in
            var failure = SignatureError.messageMismatch(keyID: signature.keyID)
            for candidate in candidates {
                let key = try Ed25519Key(publicKey: candidate.keyBytes)
                guard try key.isValidSignature(signature.signature, of: signedBytes) else { continue }
                guard try key.isValidSignature(signature.globalSignature, of: signature.globallySignedBytes) else {
                    failure = .trustedCommentMismatch(keyID: signature.keyID)
                    continue
                }
                return MinisignVerification(
                    keyID: candidate.keyID, trustedComment: signature.trustedComment, algorithm: signature.algorithm)
            }
            throw failure
        }
    }

    /// Parses a `.minisig` file's bytes and verifies it over `message`; see
    /// ``verify(signature:message:)``.
    public func verify(signatureFile: Data, message: Data) throws -> MinisignVerification {
        try verify(signature: MinisignSignature(data: signatureFile), message: message)
    }
}
