import FoundationEssentials
import Glibc

/// mapgate's own words for what the system said (`errno`), in the user's language: what every
/// file error says instead of Foundation's "The operation could not be completed." or SQLite's
/// "unable to open database file" (issue 40). Kept short, to follow "cannot write X: ".
public enum SystemErrorReason {
    /// The reason for `code` (an `errno` value).
    public static func text(_ code: Int32) -> String {
        switch code {
        case ENOENT: L.localized("no such file or folder")
        case EACCES, EPERM: L.localized("permission denied")
        case EROFS: L.localized("the file system is read-only")
        case ENOSPC: L.localized("the disk is full")
        case EFBIG: fileTooLarge(limit: FileSizeLimit.bytes)
        case EDQUOT: L.localized("the disk quota is used up")
        case EEXIST: L.localized("it already exists")
        case ENOTDIR: L.localized("a part of the path is not a folder")
        case EISDIR: L.localized("it is a folder")
        case EIO: L.localized("input/output error (the disk or medium may be failing)")
        case EMFILE, ENFILE: L.localized("too many open files")
        case ENAMETOOLONG: L.localized("the name is too long")
        case ELOOP: L.localized("too many symbolic links")
        case EBUSY, ETXTBSY: L.localized("the file is busy")
        case EPIPE: L.localized("the reader closed its end (broken pipe)")
        case ETOOMANYREFS: L.localized("too many descriptors in one message")
        case ETIMEDOUT: L.localized("no answer in time")
        case ENOTCONN: L.localized("the file system is not connected (a network or FUSE mount whose server or driver went away)")
        default: String(cString: strerror(code))
        }
    }

    /// EFBIG's reason under the process's file size `limit` (`ulimit -f`; nil: none): that limit
    /// when it is under FAT32's 4 GiB, the file system's own when there is none (found by an
    /// attack: a mirror onto a FAT32 stick blamed `ulimit -f`), and either when it is above.
    public static func fileTooLarge(limit: UInt64?) -> String {
        guard let limit else {
            return L.localized("the file would be larger than the file system allows (FAT32, as on many USB sticks, holds no file of 4 GiB or more: use exFAT or ext4)")
        }
        guard limit >= 4 << 30 else { return L.localized("the file would be larger than this process may write (ulimit -f)") }
        return L.localized(
            "the file would be larger than this process may write (ulimit -f) or than the file system allows (FAT32, as on many USB sticks, holds no file of 4 GiB or more: use exFAT or ext4)")
    }

    /// The `errno` behind a Foundation file error (its underlying `POSIXError`), or the one its
    /// code stands for; nil when there is none.
    public static func code(of error: any Error) -> Int32? {
        if let posix = error as? POSIXError { return posix.code.rawValue }
        guard let cocoa = error as? CocoaError else { return nil }
        if let underlying = cocoa.userInfo["NSUnderlyingError"] as? POSIXError { return underlying.code.rawValue }
        switch cocoa.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileReadNoPermission, .fileWriteNoPermission: return EACCES
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileWriteFileExists: return EEXIST
        case .fileReadTooLarge: return EFBIG
        case .fileWriteInvalidFileName, .fileReadInvalidFileName: return ENAMETOOLONG
        default: return nil
        }
    }
}
