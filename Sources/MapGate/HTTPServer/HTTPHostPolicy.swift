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
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return nil }
        if parts.count == 2, !isPort(parts[1]) { return nil }
        return String(parts[0])
    }

    public func allows(_ hostHeader: String) -> Bool {
        guard let name = Self.hostName(hostHeader) else { return false }
        return Self.isLoopback(name) || names.contains(name)
    }

    static func isLoopback(_ name: String) -> Bool {
        if name == "localhost" || name == "::1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    private static func bare(_ name: String) -> String {
        name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
