import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// TCP connections to a server on 127.0.0.1, for tests that need the socket itself (silent,
/// half-written or raw connections).
public enum LoopbackSocket {
    /// A socket connected to 127.0.0.1:`port` (the caller closes it), or nil when the connection
    /// was refused. With `timeout`, reads give up after that many seconds.
    public static func connect(port: UInt16, timeout: Double? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let timeout {
            var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
