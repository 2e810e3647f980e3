import CCrypto

/// One `EVP_MD_CTX`, freed in `deinit`: the running state of a digest, a signature or a
/// verification, with every return code of libcrypto checked. Not `Sendable`; one operation at a time.
package final class EVPDigestContext {
    package let pointer: OpaquePointer

    /// Throws ``SharedLibraryError`` when libcrypto cannot be opened (it is opened here, on first
    /// use: docs/decisions/dlopen-libraries.md), ``LibcryptoError`` when it fails.
    package init() throws {
        try SharedLibrary.crypto.load()
        guard let pointer = ccrypto_EVP_MD_CTX_new() else { throw LibcryptoError.fromQueue("EVP_MD_CTX_new") }
        self.pointer = pointer
    }

    deinit {
        ccrypto_EVP_MD_CTX_free(pointer)
    }

    /// Starts (or starts again) a digest with `algorithm` (`EVP_sha256()`, …), named `name` in errors.
    package func begin(_ algorithm: OpaquePointer?, name: String) throws(LibcryptoError) {
        guard let algorithm, ccrypto_EVP_DigestInit_ex(pointer, algorithm, nil) == 1 else {
            throw LibcryptoError.fromQueue("EVP_DigestInit_ex (\(name))")
        }
    }

    package func add(_ bytes: UnsafeRawBufferPointer, name: String) throws(LibcryptoError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard ccrypto_EVP_DigestUpdate(pointer, base, bytes.count) == 1 else { throw LibcryptoError.fromQueue("EVP_DigestUpdate (\(name))") }
    }

    /// The digest of what was added since `begin`.
    package func end(name: String) throws(LibcryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard ccrypto_EVP_DigestFinal_ex(pointer, &digest, &length) == 1 else { throw LibcryptoError.fromQueue("EVP_DigestFinal_ex (\(name))") }
        return Array(digest.prefix(Int(length)))
    }

    /// `count` bytes of an extendable-output function's digest (SHAKE256) of what was added since `begin`.
    package func end(name: String, extendedTo count: Int) throws(LibcryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard ccrypto_EVP_DigestFinalXOF(pointer, &output, count) == 1 else { throw LibcryptoError.fromQueue("EVP_DigestFinalXOF (\(name))") }
        return output
    }
}
