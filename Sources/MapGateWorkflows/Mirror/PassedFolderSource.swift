import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The service's side: the files of the folder the caller passed (``SystemAccess/passedFolder``)
/// looked at and opened by the caller's process (``PassedFolderHost``), through the socket the
/// caller passed as descriptor 3. Requests go one at a time.
public final class PassedFolderSource: LocalFileSource {
    public let folder: String
    private let socket: Locked<LocalSocket>

    public init(folder: String, socket: LocalSocket) {
        self.folder = folder
        self.socket = Locked(socket)
    }

    public func status(of path: String) throws(LocalFileError) -> LocalFileStatus {
        let (answer, descriptor) = try ask(.status(name: name(of: path)))
        descriptor.map { _ = close($0) }
        switch answer {
        case .status(let status): return status
        case .failed(let code): throw LocalFileError(code: code)
        case .opened: throw LocalFileError(code: EPROTO)
        }
    }

    public func open(_ path: String) throws(LocalFileError) -> Int32 {
        let (answer, descriptor) = try ask(.open(name: name(of: path)))
        switch answer {
        case .opened:
            guard let descriptor else { throw LocalFileError(code: EPROTO) }
            return descriptor
        case .failed(let code):
            descriptor.map { _ = close($0) }
            throw LocalFileError(code: code)
        case .status:
            descriptor.map { _ = close($0) }
            throw LocalFileError(code: EPROTO)
        }
    }

    private func name(of path: String) -> String {
        path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
    }

    /// The caller's process gone (it was killed) reads as the folder gone: EIO.
    private func ask(_ request: PassedFolderRequest) throws(LocalFileError) -> (PassedFolderAnswer, Int32?) {
        do {
            return try socket.withLock { socket in
                try socket.send(request)
                return try socket.receive(PassedFolderAnswer.self)
            }
        } catch {
            throw LocalFileError(code: EIO)
        }
    }
}
