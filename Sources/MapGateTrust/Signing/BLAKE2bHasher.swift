import CCrypto
import FoundationEssentials
import MapGateBase

/// BLAKE2b over libcrypto's EVP interface: the 64-byte digest minisign signs (algorithm `ED`), and
/// on an OpenSSL that can shorten it (3.2 and later), the 32-byte one of secret key checksums.
///
/// BLAKE2b-256 is not BLAKE2b-512 cut short: the output length is part of the hash's parameters.
/// OpenSSL 3.0 and 3.1 take the `size` parameter without complaint and ignore it, so a shortened
/// digest is only trusted after ``isShortDigestAvailable`` checked a known answer.
final class BLAKE2bHasher {
    static let maximumDigestLength = 64

    private let context: EVPDigestContext
    let digestLength: Int

    init(digestLength: Int = maximumDigestLength) throws {
        guard (1...Self.maximumDigestLength).contains(digestLength) else {
            throw SignatureError.libcrypto(operation: "BLAKE2b", detail: "no \(digestLength)-byte BLAKE2b digest exists")
        }
        try SharedLibrary.crypto.load()
        guard let algorithm = ccrypto_EVP_blake2b512() else { throw OpenSSLErrorQueue.error("EVP_blake2b512") }
        self.digestLength = digestLength
        context = try EVPDigestContext()
        if digestLength == Self.maximumDigestLength {
            try context.begin(algorithm, name: "BLAKE2b-512")
            return
        }
        var size = digestLength
        let started = withUnsafeMutablePointer(to: &size) { size in
            // The parameter keeps pointers to the key and the value: both live through the call.
            OSSL_DIGEST_PARAM_SIZE.withCString { key in
                var parameters = [ccrypto_OSSL_PARAM_construct_size_t(key, size), ccrypto_OSSL_PARAM_construct_end()]
                return ccrypto_EVP_DigestInit_ex2(context.pointer, algorithm, &parameters)
            }
        }
        guard started == 1 else { throw OpenSSLErrorQueue.error("EVP_DigestInit_ex2 (BLAKE2b-\(8 * digestLength))") }
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws {
        try context.add(bytes, name: "BLAKE2b")
    }

    func update(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try update($0) }
    }

    func update(_ data: Data) throws {
        try data.withUnsafeBytes { try update($0) }
    }

    /// The digest; the hasher is spent afterwards. Throws when libcrypto returned another length
    /// than the one asked for (an OpenSSL that ignores the `size` parameter).
    func finalize() throws -> [UInt8] {
        let digest = try context.end(name: "BLAKE2b")
        guard digest.count == digestLength else {
            throw SignatureError.libcrypto(
                operation: "BLAKE2b-\(8 * digestLength)",
                detail: "libcrypto returned a \(digest.count)-byte digest: this OpenSSL cannot shorten BLAKE2b (3.2 or later can)")
        }
        return digest
    }

    /// The 64-byte BLAKE2b digest of `data`, as minisign's prehashed (`ED`) signatures sign.
    static func digest512(of data: Data) throws -> [UInt8] {
        let hasher = try BLAKE2bHasher()
        try hasher.update(data)
        return try hasher.finalize()
    }

    /// Whether this libcrypto computes BLAKE2b-256 correctly: checked once against the known
    /// answer for "abc" (RFC 7693's test string; the digest is the one `b2sum -l 256` prints).
    static let isShortDigestAvailable: Bool = {
        let expected: [UInt8] = [
            0xbd, 0xdd, 0x81, 0x3c, 0x63, 0x42, 0x39, 0x72, 0x31, 0x71, 0xef, 0x3f, 0xee, 0x98, 0x57, 0x9b,
            0x94, 0x96, 0x4e, 0x3b, 0xb1, 0xcb, 0x3e, 0x42, 0x72, 0x62, 0xc8, 0xc0, 0x68, 0xd5, 0x23, 0x19,
        ]
        do {
            let hasher = try BLAKE2bHasher(digestLength: 32)
            try hasher.update(Array("abc".utf8))
            return try hasher.finalize() == expected
        } catch {
            OpenSSLErrorQueue.clear()
            return false
        }
    }()
}
