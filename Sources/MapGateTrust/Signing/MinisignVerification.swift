/// A signature that verified: which trusted key made it, and the trusted comment it vouches for.
///
/// Only ``MinisignVerifier`` makes one, so holding one means every check passed.
public struct MinisignVerification: Hashable, Sendable {
    /// The id of the trusted key whose signature verified.
    public let keyID: MinisignKeyID
    /// The trusted comment, now known to come from that key's holder.
    public let trustedComment: String
    /// Whether the signature covered the message or its BLAKE2b digest.
    public let algorithm: MinisignSignature.Algorithm

    init(keyID: MinisignKeyID, trustedComment: String, algorithm: MinisignSignature.Algorithm) {
        self.keyID = keyID
        self.trustedComment = trustedComment
        self.algorithm = algorithm
    }
}
