import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The folder a user named for `mapgate mirror` in system mode, written by the user's own process
/// (``MirrorFolderHost``) on the word of the service's `mirror`, which makes each package in its
/// own data directory and hands it over as an open descriptor (issue 36). The service never
/// creates a file in a folder of a user's; the user's process writes only the files a mirror has.
public final class RemoteMirrorFolder: MirrorFolder {
    public let path: String
    private let socket: LocalSocket
    private let scratch: String

    /// - Parameters:
    ///   - socket: the connection to the user's process.
    ///   - path: how the user named the folder, for messages.
    ///   - scratch: a folder of the service's where packages are made (the data directory's `partial/`).
    public init(socket: LocalSocket, path: String, scratch: String) {
        self.socket = socket
        self.path = path
        self.scratch = scratch
    }

    public func prepare() throws {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        // What a killed run left: files of processes that are gone.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? [] where name.hasPrefix("mirror.") && name.hasSuffix(".partial") {
            let parts = name.split(separator: ".")
            if parts.count == 4, let pid = Int32(parts[2]), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: scratch + "/" + name)
            }
        }
        try ask(.prepare)
    }

    public func holds(sha256: String, size: Int64) -> Bool {
        (try? ask(.holds(sha256: sha256, size: size))) == .holds(true)
    }

    public func temporaryPackage(_ sha256: String) -> String {
        scratch + "/mirror.\(sha256).\(getpid()).partial"
    }

    public func commit(_ temporary: String, sha256: String) -> String? {
        do {
            try ask(.commit(sha256: sha256), sending: temporary)
            return nil
        } catch {
            return errorMessage(error)
        }
    }

    public func write(_ data: Data, name: String) throws {
        let temporary = scratch + "/mirror.\(name).\(getpid()).partial"
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        try data.write(to: URL(fileURLWithPath: temporary))
        try ask(.write(name: name), sending: temporary)
    }

    public func remove(name: String) {
        _ = try? ask(.remove(name: name))
    }

    public func removePackages(keeping: Set<String>) {
        _ = try? ask(.removePackages(keeping: keeping.sorted()))
    }

    public func finish() {
        _ = try? ask(.finish)
    }

    /// Sends `request` (with a descriptor of the file `sending`, opened for it) and waits for the answer.
    @discardableResult
    private func ask(_ request: MirrorFolderRequest, sending file: String? = nil) throws -> MirrorFolderAnswer {
        var descriptor: Int32?
        if let file {
            let opened = open(file, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw GeneralFailure(L.localized("cannot open %1$s: %2$s", file, SystemErrorReason.text(errno)), kind: .io) }
            descriptor = opened
        }
        defer { descriptor.map { _ = close($0) } }
        try socket.send(request, descriptor: descriptor)
        let (answer, extra) = try socket.receive(MirrorFolderAnswer.self)
        extra.map { _ = close($0) }
        if case .failed(let reason, let io) = answer {
            throw GeneralFailure(L.localized("the mirror %1$s: %2$s", path, reason), kind: io ? .io : .failure)
        }
        return answer
    }
}
