import Foundation
import TestSupport
import Testing
@testable import MapGateServer

#if canImport(Glibc)
import Glibc
#endif

/// A socket the service manager hands over (`HTTPListener(adopting:)`, system mode's tile port
/// under `mapgate-system-tiles.socket`): taken when it listens on a TCP port, refused with the
/// reason otherwise, and left open then (it is the service manager's).
@Suite struct HTTPListenerAdoptionTests {
    func refusal(_ fd: Int32) -> String? {
        do {
            _ = try HTTPListener(adopting: fd)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aListeningTCPSocketIsTakenWithItsAddress() throws {
        let bound = try HTTPListener(host: "127.0.0.1", port: 0)
        let fd = bound.take()
        let adopted = try HTTPListener(adopting: fd)
        #expect(adopted.host == "127.0.0.1" && adopted.port == bound.port)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "close-on-exec")
    }

    @Test func aUnixSocketIsSaidToListenOnNoPort() throws {
        let folder = try TemporaryDirectory()
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = folder.file("tiles.sock")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 4) == 0)
        let reason = refusal(fd)
        #expect(reason?.contains("listens on a local socket, not on a TCP port") == true, "\(reason ?? "taken")")
        #expect(fcntl(fd, F_GETFD) >= 0, "left open")
    }

    @Test func aSocketThatDoesNotListenIsRefused() throws {
        for type in [SOCK_STREAM, SOCK_DGRAM] {
            let fd = socket(AF_INET, Int32(type.rawValue), 0)
            defer { close(fd) }
            let reason = refusal(fd)
            #expect(reason?.contains("is not a listening stream socket") == true, "\(reason ?? "taken")")
            #expect(fcntl(fd, F_GETFD) >= 0, "left open")
        }
    }
}
