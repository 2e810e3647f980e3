import CLinux
import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The caller's side of ``PassedFolderSource``: in the caller's own process, with the caller's
/// rights, opens the files of the mirror folder the caller named, as the service's `sync` asks,
/// and nothing but a mirror's files (its three by name, packages by SHA-256), never through a
/// symbolic link: a root caller must not hand the service a file a link on the stick points at.
/// The service may not be able to enter the folder itself (a stick the desktop mounted for its
/// user alone: found by an attack, `sync --from` refused it, and `chmod` does not work on FAT32).
public struct PassedFolderHost {
    let folder: Int32
    let path: String
    let socket: LocalSocket

    /// - Parameters:
    ///   - folder: the folder, open (`O_DIRECTORY`); ``run()`` closes it when it ends.
    ///   - path: the folder's absolute path as the caller named it (messages name it).
    ///   - socket: this process's end of the pair whose other end the command got.
    public init(folder: Int32, path: String, socket: LocalSocket) {
        self.folder = folder
        self.path = path
        self.socket = socket
    }

    /// Answers requests until the service's end closes (the command ended).
    public func run() {
        defer { close(folder) }
        while let (request, extra) = try? socket.receive(PassedFolderRequest.self) {
            extra.map { _ = close($0) }
            let sent: Bool
            switch request {
            case .path:
                sent = (try? socket.send(PassedFolderAnswer.path(path))) != nil
            case .status(let name):
                sent = (try? socket.send(status(name))) != nil
            case .open(let name):
                switch open(name) {
                case .success(let descriptor):
                    sent = (try? socket.send(PassedFolderAnswer.opened, descriptor: descriptor)) != nil
                    close(descriptor)
                case .failure(let error):
                    sent = (try? socket.send(PassedFolderAnswer.failed(code: error.code))) != nil
                }
            }
            if !sent { break }
        }
    }

    func status(_ name: String) -> PassedFolderAnswer {
        switch parent(of: name) {
        case .failure(let error):
            // `packages` itself a link (or no folder): said of the package as what it is (found
            // by an attack: "a part of the path is not a folder", 74, where a link is refused, 65).
            var info = stat()
            if [ENOTDIR, ELOOP].contains(error.code), fstatat(folder, MirrorLayout.packagesFolder, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                return .status(LocalFileStatus(mode: UInt32(info.st_mode), size: Int64(info.st_size)))
            }
            return .failed(code: error.code)
        case .success(let (directory, last)):
            defer { if directory != folder { close(directory) } }
            var info = stat()
            guard fstatat(directory, last, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .failed(code: errno) }
            return .status(LocalFileStatus(mode: UInt32(info.st_mode), size: Int64(info.st_size)))
        }
    }

    func open(_ name: String) -> Result<Int32, LocalFileError> {
        switch parent(of: name) {
        case .failure(let error):
            return .failure(error)
        case .success(let (directory, last)):
            defer { if directory != folder { close(directory) } }
            // Looked at before it is opened (`O_PATH` opens nothing: a device node on a stick
            // mounted without `nodev` is never opened, a FIFO never waited on), then opened
            // through that very descriptor, and looked at again.
            let place = openat(directory, last, clinux_o_path() | O_NOFOLLOW | O_CLOEXEC)
            guard place >= 0 else { return .failure(LocalFileError(code: errno)) }
            defer { close(place) }
            var info = stat()
            guard fstat(place, &info) == 0 else { return .failure(LocalFileError(code: errno)) }
            guard info.st_mode & S_IFMT == S_IFREG else { return .failure(LocalFileError(code: info.st_mode & S_IFMT == S_IFLNK ? ELOOP : ENXIO)) }
            let descriptor = Glibc.open("/proc/self/fd/\(place)", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { return .failure(LocalFileError(code: errno)) }
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                close(descriptor)
                return .failure(LocalFileError(code: ENXIO))
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            return .success(descriptor)
        }
    }

    /// The folder holding the mirror's file `name` (this folder, or its `packages`, opened without
    /// following a link) and the file's last component; only a mirror's names are taken.
    private func parent(of name: String) -> Result<(Int32, String), LocalFileError> {
        guard MirrorLayout.isMirrorFile(name) else { return .failure(LocalFileError(code: EPERM)) }
        guard name.hasPrefix(MirrorLayout.packagesFolder + "/") else { return .success((folder, name)) }
        let packages = openat(folder, MirrorLayout.packagesFolder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard packages >= 0 else { return .failure(LocalFileError(code: errno)) }
        return .success((packages, String(name.dropFirst(MirrorLayout.packagesFolder.count + 1))))
    }
}
