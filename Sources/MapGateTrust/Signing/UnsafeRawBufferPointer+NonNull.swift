extension UnsafeRawBufferPointer {
    /// Calls `body` with a byte pointer that is never NULL, even for an empty buffer (whose base
    /// address may be NULL): not every libcrypto call is documented to take NULL with length 0.
    func withNonNullBytes<Result>(_ body: (UnsafePointer<UInt8>, Int) throws -> Result) rethrows -> Result {
        if let base = baseAddress, count > 0 {
            return try body(base.assumingMemoryBound(to: UInt8.self), count)
        }
        var empty: UInt8 = 0
        return try withUnsafePointer(to: &empty) { try body($0, 0) }
    }
}
