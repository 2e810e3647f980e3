import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The files mapgate keeps in its `partial/` folder (resumable downloads, their validators, the
/// file being installed): regular files of its own, opened without following anything. Whatever
/// else stands at such a name (a symbolic link to a file elsewhere, a FIFO, an empty folder: left
/// by a crash or planted) is removed, never written through or read from.
enum PartialFile {
    /// Opens `path` for reading and writing, creating it (mode 0644) and keeping what it holds.
    static func open(_ path: String) throws -> UnixFile {
        try clear(path)
        // O_NONBLOCK: a FIFO put there between the check and the open must not block it.
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else { throw failure("cannot open \(path)") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw GeneralFailure(L.localized("cannot use %1$s: it is not a regular file", "\(path)"), kind: .io)
        }
        return UnixFile(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// The bytes of `path` if it is a regular file of at most `limit` bytes; nil (and anything
    /// else at that name removed) otherwise.
    static func read(_ path: String, limit: Int) -> Data? {
        guard (try? clear(path)) != nil else { return nil }
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        let handle = UnixFile(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= limit else { return nil }
        return try? handle.readToEnd()
    }

    /// Removes whatever stands at `path` unless it is a regular file (or nothing).
    static func clear(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG else { return }
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        guard (isFolder ? rmdir(path) : unlink(path)) == 0 else {
            throw failure("cannot remove the \(isFolder ? "folder" : "non-file") in the way at \(path)")
        }
    }

    private static func failure(_ what: String) -> GeneralFailure {
        GeneralFailure("\(what): \(SystemErrorReason.text(errno))", kind: .io)
    }
}
