#if canImport(Glibc)
import Glibc
#endif

/// The machine's own addresses, for a server bound to a wildcard (`0.0.0.0`, `::`) or a LAN
/// address: those are the names a browser on this machine or the LAN uses to reach it, so they
/// are allowed `Host` values, and the URLs printed name them instead of the unusable `0.0.0.0`.
public enum NetworkInterfaces {
    /// Every interface address that is up: IPv4, and IPv6 other than link-local (which would
    /// need a zone), as text (IPv6 without brackets). Loopback included.
    public static func addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var ipv4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self).sin_addr
                guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
            case AF_INET6:
                var ipv6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self).sin6_addr
                let isLinkLocal = withUnsafeBytes(of: ipv6) { $0[0] == 0xFE && $0[1] & 0xC0 == 0x80 }
                guard !isLinkLocal, inet_ntop(AF_INET6, &ipv6, &text, socklen_t(text.count)) != nil else { continue }
            default:
                continue
            }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !found.contains(name) { found.append(name) }
        }
        return found
    }

    /// Whether `host` is a wildcard bind address (every interface).
    public static func isWildcard(_ host: String) -> Bool {
        ["0.0.0.0", "::", "[::]"].contains(host)
    }

    /// Whether `host` is a loopback name or address (`localhost`, 127.0.0.0/8, `::1`).
    public static func isLoopback(_ host: String) -> Bool {
        HTTPHostPolicy.isLoopback(host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host.lowercased())
    }

    /// Base URLs (no trailing `/`) that reach a server bound to `host:port`: for a wildcard,
    /// `http://127.0.0.1:PORT` first, then every non-loopback address of `interfaces` (IPv4
    /// before IPv6); else the bound address alone.
    public static func urls(boundHost host: String, port: UInt16, interfaces: [String]) -> [String] {
        func url(_ address: String) -> String {
            address.contains(":") ? "http://[\(address)]:\(port)" : "http://\(address):\(port)"
        }
        guard isWildcard(host) else { return [url(host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host)] }
        let others = interfaces.filter { !isLoopback($0) }
        let ordered = others.filter { !$0.contains(":") } + (host == "0.0.0.0" ? [] : others.filter { $0.contains(":") })
        return [url("127.0.0.1")] + ordered.map(url)
    }
}
