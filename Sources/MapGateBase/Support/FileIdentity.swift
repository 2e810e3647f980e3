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
    /// Nanoseconds since 1970; a time past what that holds (after 2262-04-11, before 1677-09-21,
    /// which `touch -d` can set) is held at the end it passes, so that such a file is a changed
    /// file, never a crash.
    public var modified: Int64

    /// The identity of the file at `path`; nil when it cannot be read.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(status: info)
    }

    /// The identity `stat` or `fstat` gave.
    public init(status info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Self.nanoseconds(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
    }

    /// `seconds` × 10^9 + `nanoseconds`, held at Int64's ends instead of overflowing.
    static func nanoseconds(seconds: Int64, nanoseconds: Int64) -> Int64 {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, past) = scaled.addingReportingOverflow(nanoseconds)
        return past ? .max : sum
    }
}
