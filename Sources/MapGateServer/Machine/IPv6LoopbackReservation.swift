import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// `[::1]:port` bound and never listened on, beside system mode's tile port on 127.0.0.1
/// (``MachineTileServer``): nobody else can bind it (the socket does not allow address reuse, so
/// `SO_REUSEADDR` does not get round it, nor does `[::]` with or without `IPV6_V6ONLY`), and a
/// client that asks for `localhost` and tries `::1` first is refused at once and goes on to
/// 127.0.0.1. Without it, any user could answer there, for clients that type `localhost` (found
/// by an attack). Closed with the object.
final class IPv6LoopbackReservation: Sendable {
    private let descriptor: Int32

    /// Binds `[::1]:port`; nil when the machine has no IPv6 loopback (nobody can bind it then
    /// either). Throws when someone else holds it.
    init?(port: UInt16) throws {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_addr = in6addr_loopback
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            if code == EADDRNOTAVAIL || code == EAFNOSUPPORT { return nil }
            throw HTTPServerError(message: L.localized("cannot listen on %1$s:%2$s: %3$s", "[::1]", "\(port)", SystemErrorReason.text(code)))
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }
}
