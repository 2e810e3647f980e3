import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.x request, as the HTTP layer hands it to a handler (libmicrohttpd parsed the head).
public struct HTTPServerRequest: Sendable {
    public var method: String
    /// The request target as sent (`/a/b.png?x=1`).
    public var target: String
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query string after `?`, undecoded, or nil.
    public var query: String?
    public var version: String
    public var headers: [(name: String, value: String)]
    /// Whether an answer made for this request with a body of this many bytes fits what the server
    /// keeps of answers not yet taken (``HTTPBodyBudget``); past it the HTTP layer answers 503.
    /// A handler asks before doing what only the body's delivery may do (a tile's use of the gate).
    public var bodyFits: @Sendable (Int) -> Bool = { _ in true }
    /// The connection's socket (-1 for a request made by hand), for ``clientHasGone()``.
    var socket: Int32 = -1

    /// Whether the client has closed its side of the connection (or it broke) since it sent this
    /// request: an answer would go nowhere. One `poll` with no wait; false for a request made by
    /// hand. A handler asks before doing what only a delivered answer may do (a server's first tile
    /// delivers its use of the gate; found by an attack: a tile whose client had gone was charged).
    public func clientHasGone() -> Bool {
        guard socket >= 0 else { return false }
        // POLLRDHUP (0x2000, Linux): the peer shut down its writing side (sent FIN).
        var entry = pollfd(fd: socket, events: Int16(POLLIN) | 0x2000, revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return false }
        return entry.revents & (0x2000 | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    ///
    /// A field on several lines is one list, its values joined by ", " (RFC 9110 §5.3; found by an
    /// attack: only the first line counted, so an `If-None-Match` whose tag came on the second
    /// line got the body, and `If-Match` a 412). Fields that may come once (Host,
    /// Content-Length) are refused twice before any route asks.
    public func header(_ name: String) -> String? {
        var found: String?
        for field in headers where Self.equalIgnoringASCIICase(field.name, name) {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }

    /// Header names are ASCII; comparing their UTF-8 bytes avoids Foundation on the hot path.
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }

    public init(method: String, target: String, path: String, query: String?, version: String, headers: [(name: String, value: String)]) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
    }

    /// Splits and percent-decodes a request target: origin form (`/a/b.png`), or absolute form
    /// (`http://host:port/a/b.png`, RFC 9112 §3.2.2), whose authority then replaces `Host`.
    /// Nil for a target that is neither or whose escapes are malformed, not UTF-8, or an escaped
    /// `/` or NUL in the path.
    init?(method: String, target: String, version: String, headers: [(name: String, value: String)]) {
        if let absolute = Self.absoluteForm(target) {
            let others = headers.filter { !Self.equalIgnoringASCIICase($0.name, "Host") }
            self.init(method: method, target: absolute.path, version: version, headers: [("Host", absolute.authority)] + others)
            return
        }
        // Nearly every target is a path alone, with nothing escaped: it is the path as it is.
        if target.utf8.first == 0x2F, !target.utf8.contains(where: { $0 == 0x25 || $0 == 0x3F }) {
            self.init(method: method, target: target, path: target, query: nil, version: version, headers: headers)
            return
        }
        let bytes = Array(target.utf8)[...]
        guard bytes.first == 0x2F else { return nil }
        let question = bytes.firstIndex(of: 0x3F)
        guard let path = Self.percentDecoded(bytes[..<(question ?? bytes.endIndex)]) else { return nil }
        self.init(
            method: method, target: target, path: path, query: question.map { String(decoding: bytes[($0 + 1)...], as: UTF8.self) },
            version: version, headers: headers)
    }

    /// The authority and the origin-form rest (`/` when empty) of an absolute-form target
    /// (`http://` or `https://`, any case); nil for any other target or an empty authority.
    static func absoluteForm(_ target: String) -> (authority: String, path: String)? {
        // Nearly every target is in origin form: answered without lowercasing a copy.
        guard let first = target.utf8.first, first | 0x20 == 0x68 else { return nil }
        let lowered = target.prefix(8).lowercased()
        let schemeLength = lowered.hasPrefix("http://") ? 7 : lowered.hasPrefix("https://") ? 8 : 0
        guard schemeLength > 0 else { return nil }
        let rest = target.dropFirst(schemeLength)
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = String(rest[..<end])
        guard !authority.isEmpty else { return nil }
        let path = rest[end...]
        return (authority, path.hasPrefix("/") ? String(path) : "/" + path)
    }

    /// `%XX` decoding; nil for a malformed escape, bytes that are not UTF-8, or an escaped `/` or
    /// NUL: routes split the decoded path at `/`, so `/r/0/0%2F0.png` would be another address of
    /// `/r/0/0/0.png` (found by an attack), and no name mapgate serves holds either byte.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.contains(0x25) else { return String(validating: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x25 {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                    return nil
                }
                let decoded = high << 4 | low
                guard decoded != 0x2F, decoded != 0 else { return nil }
                output.append(decoded)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    /// Why `target` makes no request (``init(method:target:version:headers:)`` gave nil), for the
    /// 400's body: the escape or the rule at fault, never the raw bytes (found by an attack:
    /// "malformed request target" said neither what nor why).
    static func targetProblem(_ target: String) -> String {
        // In English, as every HTTP answer's body is: each literal below says "(not translated: body)".
        let bytes = Array((absoluteForm(target)?.path ?? target).utf8)
        guard bytes.first == 0x2F else { return "it does not start with /" }  // (not translated: body)
        let path = bytes[..<(bytes.firstIndex(of: 0x3F) ?? bytes.endIndex)]
        var index = path.startIndex
        while index < path.endIndex {
            guard path[index] == 0x25 else {
                index += 1
                continue
            }
            let escape = String(decoding: path[index..<min(index + 3, path.endIndex)], as: UTF8.self)
            guard index + 2 < path.endIndex, let high = hexValue(path[index + 1]), let low = hexValue(path[index + 2]) else {
                return "\(shown(escape)) is not a percent-encoded byte (% and two hexadecimal digits)"  // (not translated: body)
            }
            let decoded = high << 4 | low
            if decoded == 0x2F { return "\(escape) is an escaped /, which no path here holds" }  // (not translated: body)
            if decoded == 0 { return "\(escape) is an escaped NUL, which no path here holds" }  // (not translated: body)
            index += 3
        }
        return "its path does not decode to UTF-8 text"  // (not translated: body)
    }

    /// `text` with what is not printable ASCII percent-encoded: a part of a target said back in a
    /// body.
    static func shown(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                output += (hex.count == 1 ? "%0" : "%") + hex
            }
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
