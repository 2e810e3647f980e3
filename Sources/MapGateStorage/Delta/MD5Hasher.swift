import CCrypto
import FoundationEssentials
import MapGateBase

/// Incremental MD5 over libcrypto's EVP interface: the digest martin's `agg_tiles_hash` and the
/// tile ids of de-duplicated MBTiles files use. Not for security.
///
/// On ``EVPDigestContext`` (every return code checked). Not `Sendable`.
final class MD5Hasher {
    private let context: EVPDigestContext

    init() throws {
        context = try EVPDigestContext()
        try context.begin(ccrypto_EVP_md5(), name: "MD5")
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws {
        try context.add(bytes, name: "MD5")
    }

    /// The digest as 32 upper-case hex digits, as SQLite's `hex()` and martin write it. The hasher
    /// starts afresh afterwards.
    func finalizeHex() throws -> String {
        let digest = try context.end(name: "MD5")
        try context.begin(ccrypto_EVP_md5(), name: "MD5")
        return Self.upperHex(digest[...])
    }

    /// MD5 of `bytes` in one call, as upper-case hex.
    static func hex(of bytes: UnsafeRawBufferPointer) throws -> String {
        try SharedLibrary.crypto.load()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // A NULL data pointer with length 0 is allowed by EVP_Digest.
        guard ccrypto_EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, ccrypto_EVP_md5(), nil) == 1 else {
            throw LibcryptoError.fromQueue("EVP_Digest (MD5)")
        }
        return upperHex(digest.prefix(Int(length)))
    }

    private static func upperHex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
