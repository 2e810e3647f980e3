import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension FileManager {
    /// The size in bytes of the file at `path` (a link's target's: `stat`, not `lstat`), 0 when it
    /// cannot be read. Foundation's `attributesOfItem` does not follow a final symbolic link, so
    /// a linked 50 MB region measured as its 40-byte link.
    package func sizeOfItem(atPath path: String) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int64(info.st_size)
    }

    /// Why the file at `path` (after following links) is not a regular file, or nil when it is.
    /// A FIFO would block whoever opens it; a device or a folder is no package.
    package func notRegularFileReason(atPath path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return L.localized("cannot be read: %1$s", SystemErrorReason.text(errno)) }
        guard info.st_mode & S_IFMT != S_IFREG else { return nil }
        let kind = RegularFile.kindName(info.st_mode)
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            return L.localized("is %1$s (through a symbolic link), not a regular file: refused", kind)
        }
        return L.localized("is %1$s, not a regular file: refused", kind)
    }
}
