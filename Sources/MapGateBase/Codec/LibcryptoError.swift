import FoundationEssentials

/// A libcrypto call that failed (out of memory, a provider refusing an algorithm), with what
/// libcrypto's error queue said about it.
public struct LibcryptoError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let operation: String
    public let detail: String
    public var kind: FailureKind { .failure }
    public var errorDescription: String? { "libcrypto: \(operation) failed: \(detail)" }

    /// The error of `operation`, with every message libcrypto queued (the queue is empty afterwards).
    package static func fromQueue(_ operation: String) -> LibcryptoError {
        LibcryptoError(operation: operation, detail: OpenSSLErrorQueue.takeMessages())
    }
}
