import FoundationEssentials

/// A response body in one allocation that never changes after it is made: libmicrohttpd sends
/// from it without a copy, and any number of answers in flight share it (a style's sprite, held
/// once however many clients ask for it). Freed when the last answer using it is done.
public final class HTTPBodyBytes: @unchecked Sendable {
    // Safe to share: written once, in `init`, and only read after; freed in `deinit`, once no
    // answer holds it.
    let bytes: UnsafeMutableRawBufferPointer

    public init(_ data: Data) {
        let made = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 1)
        data.withUnsafeBytes { source in
            if let base = source.baseAddress { made.baseAddress?.copyMemory(from: base, byteCount: source.count) }
        }
        bytes = made
        count = data.count
    }

    deinit { bytes.deallocate() }

    /// Bytes of body.
    public let count: Int
}
