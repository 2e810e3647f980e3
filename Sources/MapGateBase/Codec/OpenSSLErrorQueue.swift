import CCrypto

/// libcrypto's per-thread error queue, read out for an error message.
package enum OpenSSLErrorQueue {
    /// Every queued error, oldest first, on one line; the queue is empty afterwards.
    package static func takeMessages() -> String {
        var messages: [String] = []
        while case let code = ccrypto_ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ccrypto_ERR_error_string_n(code, &buffer, buffer.count)
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            messages.append(String(decoding: bytes, as: UTF8.self))
        }
        return messages.isEmpty ? "libcrypto gave no reason" : messages.joined(separator: "; ")
    }

    /// Drops queued errors that were expected (a signature that does not verify queues some), so
    /// they do not show up in a later, unrelated message.
    package static func clear() {
        ccrypto_ERR_clear_error()
    }
}
