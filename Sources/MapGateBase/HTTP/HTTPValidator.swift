/// A server's validators (`ETag`, `Last-Modified`) as mapgate keeps them to send back in
/// `If-Range`: only values of the form HTTP gives them, bounded. A header value is the server's
/// word, saved beside a partial download and sent again on the next run: one with a bare CR, an
/// escape code or 60 KB went back whole (found by an attack; a bare CR splits a header at some
/// proxies). A value that is not one is dropped, and the download starts over instead of resuming.
public enum HTTPValidator {
    /// The longest validator kept.
    public static let maximumLength = 256

    /// `value` when it is an entity tag (RFC 9110 §8.8.3: `"…"` or `W/"…"`, visible ASCII
    /// but `"` inside), else nil.
    public static func entityTag(_ value: String?) -> String? {
        guard let value, value.utf8.count <= maximumLength else { return nil }
        let bytes = Array(value.utf8)
        let opaque = bytes.starts(with: Array("W/".utf8)) ? bytes.dropFirst(2) : bytes[...]
        guard opaque.count >= 2, opaque.first == UInt8(ascii: "\""), opaque.last == UInt8(ascii: "\"") else { return nil }
        return opaque.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) } ? value : nil
    }

    /// `value` when it can be an HTTP date (printable ASCII, no longer than a date is), else nil.
    public static func date(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 64, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return value
    }
}
