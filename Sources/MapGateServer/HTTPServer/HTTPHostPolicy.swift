#if canImport(Glibc)
import Glibc
#endif

/// Which `Host` values a server answers (DNS rebinding: a web page on another name must not
/// reach this server through a name that resolves to 127.0.0.1). Loopback names and addresses
/// (`localhost`, 127.0.0.0/8, `[::1]`), the bound address and the names added are allowed, with
/// any port; anything else is answered 421 before any route.
public struct HTTPHostPolicy: Sendable, Equatable {
    /// Lowercased names or addresses (IPv6 without brackets).
    public private(set) var names: Set<String>

    public init(boundHost: String, allowing extra: [String] = []) {
        names = Set(([boundHost] + extra).map { Self.bare($0.lowercased()) })
    }

    /// The host part of a `Host` value, lowercased, without port or IPv6 brackets; nil when malformed.
    public static func hostName(_ value: String) -> String? {
        let value = value.lowercased()
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x40 }) else { return nil }
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            let rest = value[value.index(after: close)...]
            guard rest.isEmpty || rest == ":" || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        // An empty port (`localhost:`) is the default one (RFC 3986 §3.2.3).
        if parts.count == 2, !parts[1].isEmpty, !isPort(parts[1]) { return nil }
        return String(parts[0])
    }

    public func allows(_ hostHeader: String) -> Bool {
        if let loopback = Self.isPlainLoopback(hostHeader) { return loopback || names.contains(Self.hostName(hostHeader) ?? "") }
        guard let name = Self.hostName(hostHeader) else { return false }
        return Self.isLoopback(name) || names.contains(name)
    }

    /// The common case, decided on the bytes without a copy: `127.a.b.c` or `localhost`, with an
    /// optional `:port` of 1–8 digits naming 1 to 65535. True for such a value; false for a value made only of
    /// lowercase letters, digits, dots and one colon that is no loopback name (the slow path
    /// decides on the name list then); nil for anything else (the slow path decides alone).
    static func isPlainLoopback(_ value: String) -> Bool? {
        value.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
            var end = bytes.count
            if let colon = bytes.firstIndex(of: 0x3A) {
                let port = bytes[(colon + 1)...]
                guard !port.isEmpty, port.count <= 8, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    (1...65535).contains(port.reduce(0, { $0 * 10 + Int($1 - 0x30) }))
                else { return nil }
                end = colon
            }
            let name = bytes[..<end]
            guard !name.isEmpty, name.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x2D }) else {
                return nil
            }
            if name.elementsEqual("localhost".utf8) || name.elementsEqual("localhost.".utf8) { return true }
            // Four dot-separated octets of 1–3 digits, each at most 255, the first 127.
            var octets = 0
            var digits = 0
            var value = 0
            var first = -1
            for byte in name {
                if byte == 0x2E {
                    guard digits > 0, value <= 255 else { return false }
                    if first < 0 { first = value }
                    octets += 1
                    digits = 0
                    value = 0
                } else if byte >= 0x30 && byte <= 0x39 {
                    digits += 1
                    value = value * 10 + Int(byte - 0x30)
                    guard digits <= 3 else { return false }
                } else {
                    return false
                }
            }
            guard digits > 0, value <= 255 else { return false }
            return octets == 3 && first == 127
        } ?? nil
    }

    static func isLoopback(_ name: String) -> Bool {
        // `localhost.` is the same name, fully qualified.
        if name == "localhost" || name == "localhost." { return true }
        // Any spelling of ::1, and IPv4-mapped 127.0.0.0/8 (`::ffff:127.0.0.1`).
        var address = in6_addr()
        if name.contains(":"), inet_pton(AF_INET6, name, &address) == 1 {
            let bytes = withUnsafeBytes(of: address) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] == 1 { return true }
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    private static func bare(_ name: String) -> String {
        name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
    }

    /// 1 to 8 digits naming a port (1 to 65535, leading zeros allowed as RFC 3986 has it: a
    /// `Host` of `127.0.0.1:99999` or `:0` names no port a client can reach, and would be
    /// written into the URLs a TileJSON hands out).
    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 8 && text.allSatisfy { $0.isASCII && $0.isNumber } && Int(text).map { (1...65535).contains($0) } == true
    }

    /// `value` (a `Host` the policy allowed) as URLs written for the client carry it: its port
    /// without leading zeros (`127.0.0.1:080` is written `127.0.0.1:80`; found by an attack,
    /// TileJSON's tiles said `:080`), and an empty port left out as RFC 3986 §6.2.3 normalizes it
    /// (`localhost:` was written `http://localhost:/…`).
    public static func canonical(_ value: String) -> String {
        guard let colon = value.lastIndex(of: ":"), !value[colon...].contains("]") else { return value }
        let port = value[value.index(after: colon)...]
        if port.isEmpty { return String(value[..<colon]) }
        guard let number = Int(port) else { return value }
        return value[...colon] + String(number)
    }
}
