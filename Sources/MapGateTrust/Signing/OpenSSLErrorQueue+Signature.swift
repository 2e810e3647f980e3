import MapGateBase

extension OpenSSLErrorQueue {
    /// A ``SignatureError/libcrypto(operation:detail:)`` with what the queue holds.
    static func error(_ operation: String) -> SignatureError {
        .libcrypto(operation: operation, detail: takeMessages())
    }
}
