import CCrypto
import FoundationEssentials

/// Incremental MD5 over libcrypto's EVP interface: the digest martin's `agg_tiles_hash` and the
/// tile ids of de-duplicated MBTiles files use. Not for security.
///
/// Owns one `EVP_MD_CTX`, freed in `deinit`. Not `Sendable`.
final class MD5Hasher {
    private let context: OpaquePointer

    init() {
        // EVP_MD_CTX_new only fails when memory is exhausted, which Swift treats as fatal anyway.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        self.context = context
        EVP_DigestInit_ex(context, EVP_md5(), nil)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest as 32 upper-case hex digits, as SQLite's `hex()` and martin write it. The hasher
    /// starts afresh afterwards.
    func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        EVP_DigestInit_ex(context, EVP_md5(), nil)
        return Self.upperHex(digest.prefix(Int(length)))
    }

    /// MD5 of `bytes` in one call, as upper-case hex.
    static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // A NULL data pointer with length 0 is allowed by EVP_Digest.
        EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_md5(), nil)
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
