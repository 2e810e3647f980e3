import FoundationEssentials
import Glibc
import MapGateBase

/// A command's side of system mode (issue 36): sends the command line and the caller's three
/// standard streams to the system service, then waits for its reply. The caller forwards its
/// signals meanwhile (``LocalSocket/sendByte(_:)``).
public struct SystemClient {
    public let socket: LocalSocket

    /// Connects to the service at `path`; a service that does not answer is ``SystemServiceUnreachable``.
    public static func connect(to path: String, policy: String) throws -> SystemClient {
        do {
            return SystemClient(socket: try LocalSocket.connect(to: path))
        } catch let error as LocalSocketError {
            throw SystemServiceUnreachable(socket: path, policy: policy, reason: SystemErrorReason.text(error.code))
        }
    }

    /// Sends the request with `streams` (standard input, output and error, in that order).
    /// A service that refused the connection as it came (busy) has replied and closed it before
    /// the request went: its reply is the answer, not the send's broken pipe.
    public func send(_ request: SystemRequest, streams: [Int32]) throws {
        let body = try JSONEncoder().encode(request)
        // The service reads no more than this and drops the connection (found by an attack: a
        // long line ended in "connection reset"): said here, before anything is sent.
        guard body.count <= SystemRequest.sizeLimit else {
            throw GeneralFailure(
                L.localized(
                    "the command line is too long for the system service (%1$s bytes; at most %2$s): give fewer regions at a time", "\(body.count)",
                    "\(SystemRequest.sizeLimit)"), kind: .usage)
        }
        do {
            try socket.send(body, descriptors: streams)
        } catch let error as LocalSocketError {
            if let message = try? socket.receive(limit: SystemRequest.sizeLimit, maximumDescriptors: 0, timeout: 1),
                let refusal = (try? JSONDecoder().decode(SystemReply.self, from: message.body))?.refusal
            {
                message.descriptors.forEach { close($0) }
                throw refusal
            }
            throw error
        }
    }

    /// Waits for the reply, however long the command runs (a server runs until Ctrl-C).
    public func reply() throws -> SystemReply {
        let message: (body: Data, descriptors: [Int32])
        do {
            message = try socket.receive(limit: SystemRequest.sizeLimit, maximumDescriptors: 0, timeout: .greatestFiniteMagnitude)
        } catch let error as LocalSocketError {
            throw SystemServiceUnreachable(socket: socket.path, policy: nil, reason: SystemErrorReason.text(error.code))
        }
        message.descriptors.forEach { close($0) }
        guard let reply = try? JSONDecoder().decode(SystemReply.self, from: message.body) else {
            throw SystemServiceUnreachable(socket: socket.path, policy: nil, reason: L.localized("its reply is not one mapgate understands"))
        }
        return reply
    }
}

/// The machine is in system mode and its service does not answer (exit 69).
public struct SystemServiceUnreachable: MapGateFailure, LocalizedError {
    public var socket: String
    /// The policy that set system mode, when known.
    public var policy: String?
    public var reason: String

    public var kind: FailureKind { .unavailable }

    public var errorDescription: String? {
        if let policy {
            return L.localized(
                "this machine is in system mode (%1$s), and the mapgate system service does not answer at %2$s: %3$s; an administrator starts it with 'systemctl enable --now mapgate-system.socket'",
                policy, socket, reason)
        }
        return L.localized("the mapgate system service at %1$s ended the request without an answer: %2$s", socket, reason)
    }
}
