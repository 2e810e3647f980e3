import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Device, inode, size and modification time of a file (a link's target's): what tells one file
/// from another, or a changed file from the same, without reading it. A running server notices an
/// updated region by it; an installed region's stamp (``RegionFileStamp``) is taken from it.
public struct FileIdentity: Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Nanoseconds since 1970.
    public var modified: Int64

    /// The identity of the file at `path`; nil when it cannot be read.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}
