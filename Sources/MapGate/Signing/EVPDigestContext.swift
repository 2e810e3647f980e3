import CCrypto

/// One `EVP_MD_CTX`, freed in `deinit`: the running state of a digest, a signature or a
/// verification. Not `Sendable`; one operation at a time.
final class EVPDigestContext {
    let pointer: OpaquePointer

    init() throws {
        guard let pointer = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error("EVP_MD_CTX_new") }
        self.pointer = pointer
    }

    deinit {
        EVP_MD_CTX_free(pointer)
    }
}
