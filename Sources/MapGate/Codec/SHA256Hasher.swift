import CCrypto
import FoundationEssentials

/// Incremental SHA-256 over libcrypto's EVP interface, fed chunk by chunk while a file streams.
///
/// Owns one `EVP_MD_CTX`, freed in `deinit`. Not `Sendable`.
public final class SHA256Hasher {
    private let context: OpaquePointer

    public init() {
        // EVP_MD_CTX_new only fails when memory is exhausted, which Swift treats as fatal anyway.
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        self.context = context
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    public func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits. The hasher starts afresh afterwards.
    public func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        return digest.prefix(Int(length)).map { String.hex($0) }.joined()
    }

    public static func hex(of data: Data) -> String {
        let hasher = SHA256Hasher()
        hasher.update(data)
        return hasher.finalizeHex()
    }

    /// Hashes a file in 1 MiB chunks, never holding it whole in memory.
    public static func hex(ofFileAt path: String) throws -> String {
        guard let handle = UnixFile(forReadingAtPath: path) else {
            throw GeneralFailure("cannot read \(path) to hash it", kind: .io)
        }
        defer { try? handle.close() }
        let hasher = SHA256Hasher()
        while let chunk = try handle.read(upToCount: 256 << 10), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finalizeHex()
    }
}
