import CCrypto
import MapGateBase

/// An Ed25519 key held by libcrypto: owns one `EVP_PKEY`, freed in `deinit`.
///
/// Made from a raw 32-byte public key (verification only) or a 32-byte seed (signing as well).
/// Signing and verifying go through `EVP_DigestSign` / `EVP_DigestVerify` with no digest, as
/// Ed25519 hashes internally. Not `Sendable`: it is used by one thread at a time.
final class Ed25519Key {
    static let publicKeyLength = 32
    static let seedLength = 32
    static let signatureLength = 64

    private let key: OpaquePointer

    /// A verification key from its 32 raw bytes.
    init(publicKey: [UInt8]) throws {
        guard publicKey.count == Self.publicKeyLength else {
            throw SignatureError.publicKeyMalformed("an Ed25519 public key has 32 bytes, not \(publicKey.count)")
        }
        try SharedLibrary.crypto.load()
        guard let key = ccrypto_EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, publicKey.count) else {
            throw OpenSSLErrorQueue.error("EVP_PKEY_new_raw_public_key (Ed25519)")
        }
        self.key = key
    }

    /// A signing key from its 32-byte seed (the first half of libsodium's 64-byte secret key).
    init(seed: [UInt8]) throws {
        guard seed.count == Self.seedLength else {
            throw SignatureError.secretKeyMalformed("an Ed25519 seed has 32 bytes, not \(seed.count)")
        }
        try SharedLibrary.crypto.load()
        guard let key = ccrypto_EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count) else {
            throw OpenSSLErrorQueue.error("EVP_PKEY_new_raw_private_key (Ed25519)")
        }
        self.key = key
    }

    deinit {
        ccrypto_EVP_PKEY_free(key)
    }

    /// The 32 raw bytes of the public key (derived from the seed for a signing key).
    func publicKeyBytes() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.publicKeyLength)
        var length = bytes.count
        guard ccrypto_EVP_PKEY_get_raw_public_key(key, &bytes, &length) == 1, length == Self.publicKeyLength else {
            throw OpenSSLErrorQueue.error("EVP_PKEY_get_raw_public_key (Ed25519)")
        }
        return bytes
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`. A signature that does not
    /// verify is `false`; only a libcrypto failure throws.
    func isValidSignature(_ signature: [UInt8], of message: UnsafeRawBufferPointer) throws -> Bool {
        guard signature.count == Self.signatureLength else { return false }
        let context = try EVPDigestContext()
        guard ccrypto_EVP_DigestVerifyInit(context.pointer, nil, nil, nil, key) == 1 else {
            throw OpenSSLErrorQueue.error("EVP_DigestVerifyInit (Ed25519)")
        }
        let result = message.withNonNullBytes { bytes, count in
            ccrypto_EVP_DigestVerify(context.pointer, signature, signature.count, bytes, count)
        }
        // 0 is a signature that does not verify; below 0 is malformed input. Both are "no" here,
        // and leave reasons on the error queue that must not leak into a later message.
        OpenSSLErrorQueue.clear()
        return result == 1
    }

    func isValidSignature(_ signature: [UInt8], of message: [UInt8]) throws -> Bool {
        try message.withUnsafeBytes { try isValidSignature(signature, of: $0) }
    }

    /// This key's Ed25519 signature of `message` (64 bytes). Needs a key made from a seed.
    func signature(of message: UnsafeRawBufferPointer) throws -> [UInt8] {
        let context = try EVPDigestContext()
        guard ccrypto_EVP_DigestSignInit(context.pointer, nil, nil, nil, key) == 1 else {
            throw OpenSSLErrorQueue.error("EVP_DigestSignInit (Ed25519)")
        }
        var signature = [UInt8](repeating: 0, count: Self.signatureLength)
        var length = signature.count
        let result = message.withNonNullBytes { bytes, count in
            ccrypto_EVP_DigestSign(context.pointer, &signature, &length, bytes, count)
        }
        guard result == 1, length == Self.signatureLength else {
            throw OpenSSLErrorQueue.error("EVP_DigestSign (Ed25519)")
        }
        return signature
    }

    func signature(of message: [UInt8]) throws -> [UInt8] {
        try message.withUnsafeBytes { try signature(of: $0) }
    }
}
