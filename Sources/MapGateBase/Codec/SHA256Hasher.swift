import CCrypto
import FoundationEssentials

/// Incremental SHA-256 over libcrypto's EVP interface (``EVPDigestContext``, every return code
/// checked), fed chunk by chunk while a file streams. Not `Sendable`.
public final class SHA256Hasher {
    private let context: EVPDigestContext

    public init() throws {
        context = try EVPDigestContext()
        try context.begin(ccrypto_EVP_sha256(), name: "SHA-256")
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws {
        try context.add(bytes, name: "SHA-256")
    }

    public func update(_ data: Data) throws {
        try data.withUnsafeBytes { try update($0) }
    }

    /// The digest as 64 lowercase hex digits. The hasher starts afresh afterwards.
    public func finalizeHex() throws -> String {
        let digest = try context.end(name: "SHA-256")
        try context.begin(ccrypto_EVP_sha256(), name: "SHA-256")
        return String.hex(digest)
    }

    public static func hex(of data: Data) throws -> String {
        let hasher = try SHA256Hasher()
        try hasher.update(data)
        return try hasher.finalizeHex()
    }

    /// Hashes a file in 256 KiB chunks, never holding it whole in memory.
    public static func hex(ofFileAt path: String) throws -> String {
        guard let handle = UnixFile(forReadingAtPath: path) else {
            throw GeneralFailure(L.localized("cannot read %1$s to hash it", "\(path)"), kind: .io)
        }
        defer { try? handle.close() }
        return try hex(reading: handle)
    }

    /// Hashes what is left to read of `file`, from its offset to its end, in 256 KiB chunks.
    public static func hex(reading file: UnixFile) throws -> String {
        let hasher = try SHA256Hasher()
        while let chunk = try file.read(upToCount: 256 << 10), !chunk.isEmpty {
            try hasher.update(chunk)
        }
        return try hasher.finalizeHex()
    }
}
