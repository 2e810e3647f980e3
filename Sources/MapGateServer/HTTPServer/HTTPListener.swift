import FoundationEssentials
import MapGateBase
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket, bound but not yet served: `serve` and `open` bind first and count a
/// gate use only once the port is known to be theirs. An ``HTTPServer`` takes the socket over (libmicrohttpd serves it and closes it at stop);
/// a listener never handed to one closes it.
public final class HTTPListener: Sendable {
    public let host: String
    /// The port actually bound (useful when 0 was asked for).
    public let port: UInt16
    private let descriptor: Locked<Int32?>
    /// A duplicate of a socket another listener holds (``duplicate()``): its server must hand it
    /// back rather than shut it down.
    public let isShared: Bool

    public init(host: String, port: UInt16) throws {
        self.host = host
        let (fd, bound) = try Self.listen(host: host, port: port)
        self.port = bound
        descriptor = Locked(fd)
        isShared = false
    }

    private init(host: String, port: UInt16, descriptor fd: Int32) {
        self.host = host
        self.port = port
        descriptor = Locked(fd)
        isShared = true
    }

    /// Takes over `descriptor`, a listening TCP socket the service manager handed over
    /// (``SocketActivation``: system mode's tile port, held from boot by
    /// `mapgate-system-tiles.socket`). Throws, leaving it open, when it is not one.
    public init(adopting fd: Int32) throws {
        var type: Int32 = 0
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue),
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 1
        else { throw HTTPServerError(message: L.localized("descriptor %1$s is not a listening stream socket", "\(fd)")) }
        var address = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let family = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) == 0 ? Int32($0.pointee.sa_family) : -1 }
        }
        // A unix socket (a unit's ListenStream=/path) listens, but on no port (a review found it
        // called "not a listening stream socket").
        guard family == AF_INET || family == AF_INET6 else {
            throw HTTPServerError(message: L.localized("descriptor %1$s listens on a local socket, not on a TCP port", "\(fd)"))
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                getnameinfo(pointer, size, &host, socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV) == 0
            }
        }
        guard named, let port = UInt16(Self.text(service)) else {
            throw HTTPServerError(message: L.localized("descriptor %1$s is not a listening stream socket", "\(fd)"))
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.host = Self.text(host)
        self.port = port
        descriptor = Locked(fd)
        isShared = false
    }

    /// A C string from a buffer filled by the C library.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        if let fd = descriptor.withLock({ $0 }) { close(fd) }
    }

    /// Another listener on the same socket (`dup`), for a server to take while this one keeps the
    /// port: system mode's service holds its tile port between sessions, so that no user can bind
    /// it meanwhile (found by an attack; ``MachineTileServer``). Throws once the socket was taken.
    public func duplicate() throws -> HTTPListener {
        guard let held = descriptor.withLock({ $0 }) else { throw HTTPServerError(message: L.localized("the listening socket was already handed to a server")) }
        let copy = fcntl(held, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw HTTPServerError(message: L.localized("cannot listen on %1$s:%2$s: %3$s", host, "\(port)", SystemErrorReason.text(errno))) }
        return HTTPListener(host: host, port: port, descriptor: copy)
    }

    /// The base URL, such as `http://127.0.0.1:8080`.
    public var baseURL: String { "http://" + Self.endpoint(host, port) }

    /// `host:port`, an IPv6 host in brackets (`[::1]:8080`).
    public static func endpoint(_ host: String, _ port: UInt16) -> String {
        "\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Hands the socket to a server, once.
    func take() -> Int32 {
        descriptor.withLock { fd in
            defer { fd = nil }
            return fd ?? -1
        }
    }

    private static func listen(host: String, port: UInt16) throws -> (Int32, UInt16) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            throw HTTPServerError(message: L.localized("cannot listen on %1$s:%2$s: %3$s", "\(host)", "\(port)", "\(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(info) }
        // Close-on-exec like every descriptor mapgate opens: a child (the browser "update now"
        // starts, a service's request) must not keep the port.
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), first.pointee.ai_protocol)
        guard fd >= 0 else { throw HTTPServerError(message: L.localized("cannot create a socket: %1$s", "\(SystemErrorReason.text(errno))")) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, Glibc.listen(fd, 4096) == 0 else {
            let code = errno
            close(fd)
            // A port another program holds is a service unavailable (69), as in system mode (found
            // by an attack: 74, an I/O error, here and 69 there).
            throw HTTPServerError(
                message: L.localized("cannot listen on %1$s:%2$s: %3$s", "\(host)", "\(port)", "\(SystemErrorReason.text(code))"),
                kind: code == EADDRINUSE ? .unavailable : .io)
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0 else { close(fd); throw HTTPServerError(message: L.localized("getsockname failed")) }
        let family = address.ss_family
        let boundPort = withUnsafePointer(to: &address) { pointer -> UInt16 in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        return (fd, boundPort)
    }

}
