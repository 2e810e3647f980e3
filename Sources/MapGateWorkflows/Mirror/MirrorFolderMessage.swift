import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// What system mode's `mirror` (run by the service) asks of the user's process that writes the
/// user's folder (``MirrorFolderHost``), one framed JSON message at a time; a package's or a
/// file's bytes travel as an open descriptor with the message (issue 36).
enum MirrorFolderRequest: Codable, Equatable {
    case prepare
    case holds(sha256: String, size: Int64)
    /// With the package's descriptor.
    case commit(sha256: String)
    /// With the file's descriptor.
    case write(name: String)
    case remove(name: String)
    case removePackages(keeping: [String])
    case finish
}

/// The answer to a ``MirrorFolderRequest``.
enum MirrorFolderAnswer: Codable, Equatable {
    case done
    case holds(Bool)
    /// What failed, in the host's words; `io`: a file could not be written (else the request was wrong).
    case failed(reason: String, io: Bool)
}

extension LocalSocket {
    /// The most a mirror message may be (the names a `removePackages` keeps: 65 bytes each).
    static let mirrorMessageLimit = 16 << 20

    func send<Message: Encodable>(_ message: Message, descriptor: Int32? = nil) throws {
        try send(try JSONEncoder().encode(message), descriptors: descriptor.map { [$0] } ?? [])
    }

    /// The next message and the descriptor that came with it (the caller closes it), or nil at the end.
    func receive<Message: Decodable>(_ type: Message.Type, timeout: Double = .infinity) throws -> (Message, Int32?) {
        let message = try receive(limit: Self.mirrorMessageLimit, maximumDescriptors: 1, timeout: timeout)
        for extra in message.descriptors.dropFirst() { close(extra) }
        do {
            return (try JSONDecoder().decode(type, from: message.body), message.descriptors.first)
        } catch {
            message.descriptors.first.map { _ = close($0) }
            throw error
        }
    }
}
