import CLinux
import FoundationEssentials
import Glibc

/// A connected or listening local (`AF_UNIX`) stream socket: what system mode's commands and
/// service talk over (issue 36). Messages are framed (a 4-byte big-endian length, then the
/// bytes) and may carry open descriptors (`SCM_RIGHTS`); the listening side learns who connected
/// from the kernel (``peer()``), never from what the peer says.
///
/// Not `Sendable` on purpose except for ``sendByte(_:)`` and ``shutDown()``, which a second
/// thread may call while the first reads (a signal forwarded while the reply is awaited).
public final class LocalSocket: @unchecked Sendable {
    public let fileDescriptor: Int32
    /// The path, for messages.
    public let path: String

    private init(fileDescriptor: Int32, path: String) {
        self.fileDescriptor = fileDescriptor
        self.path = path
    }

    deinit { close(fileDescriptor) }

    /// Connects to the socket at `path`.
    public static func connect(to path: String) throws -> LocalSocket {
        let descriptor = clinux_local_socket(path, 0)
        guard descriptor >= 0 else { throw LocalSocketError(path: path, operation: .connect, code: errno) }
        return LocalSocket(fileDescriptor: descriptor, path: path)
    }

    /// Two connected sockets (`socketpair`): one end for this process, one for a child it starts.
    public static func pair(name: String) throws -> (LocalSocket, LocalSocket) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw LocalSocketError(path: name, operation: .connect, code: errno)
        }
        return (LocalSocket(fileDescriptor: ends[0], path: name), LocalSocket(fileDescriptor: ends[1], path: name))
    }

    /// Takes over `descriptor`, a socket this process was started with (it closes it when done).
    public static func adopting(_ descriptor: Int32, name: String) -> LocalSocket {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return LocalSocket(fileDescriptor: descriptor, path: name)
    }

    /// Listens at `path`, replacing a socket left there by an earlier run (never another kind of
    /// file), readable and writable by everyone: who may do what is decided per connection.
    public static func listen(at path: String) throws -> LocalSocket {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
        let descriptor = clinux_local_socket(path, 1)
        guard descriptor >= 0 else { throw LocalSocketError(path: path, operation: .listen, code: errno) }
        chmod(path, 0o666)
        return LocalSocket(fileDescriptor: descriptor, path: path)
    }

    /// The local socket the service manager handed over (``SocketActivation``): the one named
    /// `name`, or else the only one if it is a local socket; nil when there is none.
    public static func activated(environment: [String: String], path: String, name: String = "system") -> LocalSocket? {
        guard let activation = SocketActivation(environment: environment) else { return nil }
        let only = activation.count == 1 ? SocketActivation.firstDescriptor : nil
        guard let descriptor = activation.descriptor(named: name) ?? only else { return nil }
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0, domain == AF_UNIX else { return nil }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return LocalSocket(fileDescriptor: descriptor, path: path)
    }

    /// The next connection; nil when interrupted (`EINTR`, `ECONNABORTED`) or out of descriptors
    /// (after a short pause, so that a flood does not spin the loop).
    public func accept() -> LocalSocket? {
        let descriptor = clinux_accept(fileDescriptor)
        if descriptor < 0 {
            if errno == EMFILE || errno == ENFILE { usleep(100_000) }
            return nil
        }
        return LocalSocket(fileDescriptor: descriptor, path: path)
    }

    /// Who is at the other end, as the kernel recorded it when the peer connected.
    public func peer() throws -> PeerCredentials {
        var uid: uid_t = 0
        var gid: gid_t = 0
        var pid: pid_t = 0
        guard clinux_peer_credentials(fileDescriptor, &uid, &gid, &pid) == 0 else {
            throw LocalSocketError(path: path, operation: .receive, code: errno)
        }
        var groups = [gid_t](repeating: 0, count: 256)
        var count = clinux_peer_groups(fileDescriptor, &groups, Int32(groups.count))
        if count < 0, errno == ERANGE {
            // More than 256 groups: as many as Linux allows (found by an attack: an administrator
            // in 300 groups was taken for an ordinary user).
            groups = [gid_t](repeating: 0, count: 65_536)
            count = clinux_peer_groups(fileDescriptor, &groups, Int32(groups.count))
        }
        return PeerCredentials(uid: uid, gid: gid, pid: pid, groups: count > 0 ? Array(groups.prefix(Int(count))) : [])
    }

    /// Sends `body` as one framed message, with `descriptors` attached to its first bytes.
    public func send(_ body: Data, descriptors: [Int32] = []) throws {
        var length = UInt32(body.count).bigEndian
        var bytes = Data(bytes: &length, count: 4)
        bytes.append(body)
        var sent = 0
        var attached = descriptors
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                clinux_send_descriptors(fileDescriptor, buffer.baseAddress! + sent, buffer.count - sent, attached, Int32(attached.count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw LocalSocketError(path: path, operation: .send, code: errno)
            }
            sent += result
            attached = []
        }
    }

    /// Receives one framed message of at most `limit` bytes, and the descriptors that came with
    /// it (the caller owns and closes them), waiting at most `timeout` seconds in all.
    /// Throws on a message too long or carrying more than `maximumDescriptors` descriptors (a
    /// peer sending its message a byte at a time, each with descriptors, would otherwise make this
    /// process hold hundreds until the time is up), the end of the stream before a whole message,
    /// or the time.
    public func receive(limit: Int, maximumDescriptors: Int, timeout: Double) throws -> (body: Data, descriptors: [Int32]) {
        let deadline = MonotonicClock.seconds + timeout
        var bytes = Data()
        var descriptors: [Int32] = []
        var expected: Int?
        var buffer = [UInt8](repeating: 0, count: 16_384)
        do {
            while expected.map({ bytes.count < 4 + $0 }) ?? (bytes.count < 4) {
                guard try waitReadable(until: deadline) else { throw LocalSocketError(path: path, operation: .receive, code: ETIMEDOUT) }
                var received = [Int32](repeating: -1, count: 8)
                var count: Int32 = 0
                let wanted = min(buffer.count, (expected.map { 4 + $0 } ?? 4) - bytes.count)
                let result = clinux_receive_descriptors(fileDescriptor, &buffer, wanted, &received, &count)
                descriptors += received.prefix(Int(count))
                guard descriptors.count <= maximumDescriptors else { throw LocalSocketError(path: path, operation: .receive, code: ETOOMANYREFS) }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw LocalSocketError(path: path, operation: .receive, code: errno)
                }
                guard result > 0 else { throw LocalSocketError(path: path, operation: .receive, code: ECONNRESET) }
                bytes.append(contentsOf: buffer.prefix(result))
                if expected == nil, bytes.count >= 4 {
                    let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                    guard length <= limit else { throw LocalSocketError(path: path, operation: .receive, code: EMSGSIZE) }
                    expected = length
                }
            }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw error
        }
        return (Data(bytes.dropFirst(4)), descriptors)
    }

    /// Sends one byte (a signal's number) outside the framing; errors are ignored (the peer gone).
    public func sendByte(_ byte: UInt8) {
        var value = byte
        _ = Glibc.send(fileDescriptor, &value, 1, Int32(MSG_NOSIGNAL))
    }

    /// Reads one byte sent with ``sendByte(_:)``: nil at the end of the stream or on an error.
    public func receiveByte() -> UInt8? {
        var value: UInt8 = 0
        while true {
            let result = recv(fileDescriptor, &value, 1, 0)
            if result == 1 { return value }
            if result < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// Ends both directions (a thread blocked reading returns).
    public func shutDown() { _ = shutdown(fileDescriptor, Int32(SHUT_RDWR)) }

    private func waitReadable(until deadline: Double) throws -> Bool {
        while true {
            let left = deadline - MonotonicClock.seconds
            guard left > 0 else { return false }
            var entry = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let result = poll(&entry, 1, Int32(min(left, 60) * 1000) + 1)
            if result > 0 { return true }
            if result < 0, errno != EINTR { throw LocalSocketError(path: path, operation: .receive, code: errno) }
        }
    }
}

/// Who connected to a ``LocalSocket``, from the kernel (`SO_PEERCRED`, `SO_PEERGROUPS`).
public struct PeerCredentials: Sendable, Equatable {
    public var uid: uid_t
    public var gid: gid_t
    public var pid: pid_t
    /// The supplementary groups.
    public var groups: [gid_t]

    public init(uid: uid_t, gid: gid_t, pid: pid_t, groups: [gid_t]) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.groups = groups
    }

    /// In `group`, as primary or supplementary group.
    public func isMember(of group: gid_t) -> Bool { gid == group || groups.contains(group) }
}

/// A local socket could not be connected to, listened at, or talked over.
public struct LocalSocketError: MapGateFailure, LocalizedError {
    public enum Operation: Sendable { case connect, listen, send, receive }
    public var path: String
    public var operation: Operation
    public var code: Int32

    public var kind: FailureKind { .unavailable }

    public var errorDescription: String? {
        let reason = SystemErrorReason.text(code)
        switch operation {
        case .connect: return L.localized("cannot connect to %1$s: %2$s", path, reason)
        case .listen: return L.localized("cannot listen at %1$s: %2$s", path, reason)
        case .send, .receive: return L.localized("the connection at %1$s failed: %2$s", path, reason)
        }
    }
}
