import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A file that must be a regular file, opened for reading without waiting on anything else: with
/// `O_NONBLOCK` (opening a FIFO would wait for a writer) and checked with `fstat` on the
/// descriptor itself (no swap between a check and the open). A server thread that opens one can
/// never hang in `open`.
public struct RegularFile: ~Copyable {
    /// Open, in blocking mode again; the caller takes it over with ``take()`` or it is closed.
    private var descriptor: Int32
    public let size: Int64

    /// - Parameter followingLinks: false refuses a symbolic link (`O_NOFOLLOW`).
    public init(forReadingAtPath path: String, followingLinks: Bool = true) throws(RegularFileError) {
        let opened = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW))
        guard opened >= 0 else {
            let reason = errno == ELOOP && !followingLinks ? "is a symbolic link: refused" : "cannot be read: \(SystemErrorReason.text(errno))"
            throw RegularFileError(path: path, reason: reason, kind: .io)
        }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let reason = SystemErrorReason.text(errno)
            close(opened)
            throw RegularFileError(path: path, reason: L.localized("cannot be read: %1$s", "\(reason)"), kind: .io)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw RegularFileError(path: path, reason: L.localized("is %1$s, not a regular file: refused", "\(Self.kindName(info.st_mode))"), kind: .badData)
        }
        let flags = fcntl(opened, F_GETFL)
        if flags >= 0 { _ = fcntl(opened, F_SETFL, flags & ~O_NONBLOCK) }
        descriptor = opened
        size = Int64(info.st_size)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The descriptor, now the caller's to close.
    public consuming func take() -> Int32 {
        let taken = descriptor
        descriptor = -1
        return taken
    }

    /// The whole file.
    public consuming func readAll() throws -> Data {
        let file = UnixFile(fileDescriptor: take(), closeOnDealloc: true)
        return try file.readToEnd() ?? Data()
    }

    /// What a file of mode `mode` is (`a FIFO`, `a folder`, …).
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: L.localized("a regular file")
        case S_IFIFO: L.localized("a FIFO")
        case S_IFDIR: L.localized("a folder")
        case S_IFCHR, S_IFBLK: L.localized("a device")
        case S_IFSOCK: L.localized("a socket")
        default: L.localized("of an unknown kind")
        }
    }
}

/// A file that cannot be opened as a regular file: its path and why (`is a FIFO, not a regular
/// file: refused`, `cannot be read: Permission denied`).
public struct RegularFileError: MapGateFailure, LocalizedError, Sendable {
    public let path: String
    public let reason: String
    public let kind: FailureKind
    public var errorDescription: String? { "\(path) \(reason)" }

    public init(path: String, reason: String, kind: FailureKind) {
        self.path = path
        self.reason = reason
        self.kind = kind
    }
}
