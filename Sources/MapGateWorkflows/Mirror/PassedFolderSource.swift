import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The service's side: the files of the folder the caller passed (``SystemAccess/passedFolder``)
/// looked at and opened by the caller's process (``PassedFolderHost``), through the socket the
/// caller passed as descriptor 3. Requests go one at a time, each answered within
/// ``answerTimeout`` (a caller that stops answering would otherwise hold the data directory's
/// lock and the gate's use for ever; found by an attack). The folder is named by the caller's
/// own path: messages, the resume hint and `list`'s record name what the user typed, and every
/// path under it is the caller's (``HTTPClient/localFiles``), never the service's own.
public final class PassedFolderSource: LocalFileSource {
    public let folder: String
    /// Nil once an answer came too late: a late one would be taken for the next request's.
    private let socket: Locked<LocalSocket?>
    private let timeout: Double
    /// Seconds an answer may take: the caller's process opens a local file (a slow stick's
    /// first read included) far sooner.
    public static let answerTimeout = 120.0

    /// Asks the caller's process the folder's path.
    public init(socket: LocalSocket, answerTimeout: Double = answerTimeout) throws(LocalFileError) {
        let locked = Locked<LocalSocket?>(socket)
        guard case (.path(let path), let descriptor) = try Self.ask(.path, on: locked, timeout: answerTimeout) else {
            throw LocalFileError(code: EPROTO)
        }
        descriptor.map { _ = close($0) }
        // An absolute path, one line of text (it is said in messages), not a folder of the service's.
        guard path.hasPrefix("/"), path.count > 1, !path.hasSuffix("/"), !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw LocalFileError(code: EINVAL)
        }
        self.socket = locked
        timeout = answerTimeout
        folder = path
    }

    public func status(of path: String) throws(LocalFileError) -> LocalFileStatus {
        let (answer, descriptor) = try Self.ask(.status(name: name(of: path)), on: socket, timeout: timeout)
        descriptor.map { _ = close($0) }
        switch answer {
        case .status(let status): return status
        case .failed(let code): throw LocalFileError(code: code)
        case .opened, .path: throw LocalFileError(code: EPROTO)
        }
    }

    public func open(_ path: String) throws(LocalFileError) -> Int32 {
        let (answer, descriptor) = try Self.ask(.open(name: name(of: path)), on: socket, timeout: timeout)
        switch answer {
        case .opened:
            guard let descriptor else { throw LocalFileError(code: EPROTO) }
            return descriptor
        case .failed(let code):
            descriptor.map { _ = close($0) }
            throw LocalFileError(code: code)
        case .status, .path:
            descriptor.map { _ = close($0) }
            throw LocalFileError(code: EPROTO)
        }
    }

    private func name(of path: String) -> String {
        path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
    }

    /// The caller's process gone, or silent past ``answerTimeout``, reads as the folder gone (EIO).
    private static func ask(_ request: PassedFolderRequest, on socket: Locked<LocalSocket?>, timeout: Double) throws(LocalFileError) -> (PassedFolderAnswer, Int32?) {
        let result: Result<(PassedFolderAnswer, Int32?), LocalFileError> = socket.withLock { socket in
            guard let connection = socket else { return .failure(LocalFileError(code: EIO)) }
            do {
                try connection.send(request)
                return .success(try connection.receive(PassedFolderAnswer.self, timeout: timeout))
            } catch let error as LocalSocketError where error.code == ETIMEDOUT {
                socket = nil
                return .failure(LocalFileError(code: ETIMEDOUT))
            } catch {
                return .failure(LocalFileError(code: EIO))
            }
        }
        return try result.get()
    }
}
