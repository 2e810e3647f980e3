import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A regular file held open from the moment it was looked at (``RegularFile``'s checks), so that
/// what is opened later is this very file, whatever its path names by then: through
/// ``openablePath`` (`/proc/self/fd/N`), which opens the file the descriptor holds, renamed over
/// or deleted included. A server checks an installed region's file once and its workers open it
/// when they first need it: by path they could open a file swapped in meanwhile, and keep it (found
/// by an attack: swapped in, read by a worker, then put back before the next look, and that worker
/// served the swapped-in file's tiles as the region's until the server stopped).
public final class HeldFile: Sendable {
    public let path: String
    /// The held file's identity (from the descriptor, not the path).
    public let identity: FileIdentity
    /// A path that opens the held file: `/proc/self/fd/N`, or ``path`` itself where `/proc` does
    /// not show this process's descriptors (not mounted).
    public let openablePath: String
    private let descriptor: Int32

    public init(path: String) throws(RegularFileError) {
        let descriptor = try RegularFile(forReadingAtPath: path).take()
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = SystemErrorReason.text(errno)
            close(descriptor)
            throw RegularFileError(path: path, reason: L.localized("cannot be read: %1$s", "\(reason)"), kind: .io)
        }
        self.path = path
        self.descriptor = descriptor
        identity = FileIdentity(status: info)
        let throughProc = "/proc/self/fd/\(descriptor)"
        var seen = stat()
        let procShowsIt = stat(throughProc, &seen) == 0 && seen.st_dev == info.st_dev && seen.st_ino == info.st_ino
        openablePath = procShowsIt ? throughProc : path
    }

    deinit { close(descriptor) }
}
