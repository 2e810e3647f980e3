import FoundationEssentials
import Glibc

/// An open file descriptor, with the part of Foundation's `FileHandle` mapgate used (Foundation,
/// with ICU, is not linked): reads until the count or the end, writes all bytes, seeks, truncates.
///
/// Failures throw the `CocoaError` `FileHandle` threw for the `errno` (`ENOSPC` is
/// `.fileWriteOutOfSpace`, "There isn’t enough space."), with the `POSIXError` underneath.
///
/// Not `Sendable`: an open file (its offset, whether it is closed) belongs to one thread at a
/// time, and the compiler sees where it is handed to another.
public final class UnixFile {
    public let fileDescriptor: Int32
    private let closeOnDealloc: Bool
    private var isClosed = false

    public init(fileDescriptor: Int32, closeOnDealloc: Bool) {
        self.fileDescriptor = fileDescriptor
        self.closeOnDealloc = closeOnDealloc
    }

    /// Opens an existing file for reading; nil when it cannot be.
    public convenience init?(forReadingAtPath path: String) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.init(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Opens an existing file for writing (not truncated); nil when it cannot be.
    public convenience init?(forWritingAtPath path: String) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.init(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Standard error, which stays open: a handle of its own for each use, so no thread shares one.
    public static var standardError: UnixFile { UnixFile(fileDescriptor: 2, closeOnDealloc: false) }

    deinit {
        if closeOnDealloc, !isClosed { Glibc.close(fileDescriptor) }
    }

    /// `FileHandle`'s errors: the `errno` as a `CocoaError` for reading or writing.
    static func failure(_ code: Int32, reading: Bool) -> CocoaError {
        let kind: CocoaError.Code
        if reading {
            switch code {
            case EFBIG: kind = .fileReadTooLarge
            case ENOENT: kind = .fileReadNoSuchFile
            case EPERM, EACCES: kind = .fileReadNoPermission
            default: kind = .fileReadUnknown
            }
        } else {
            switch code {
            case ENOENT: kind = .fileNoSuchFile
            case EPERM, EACCES: kind = .fileWriteNoPermission
            case ENAMETOOLONG: kind = .fileWriteInvalidFileName
            case EDQUOT, ENOSPC: kind = .fileWriteOutOfSpace
            case EROFS: kind = .fileWriteVolumeReadOnly
            case EEXIST: kind = .fileWriteFileExists
            default: kind = .fileWriteUnknown
            }
        }
        var info: [String: any Sendable] = [:]
        if let posix = POSIXErrorCode(rawValue: code) { info["NSUnderlyingError"] = POSIXError(posix) }
        return CocoaError(kind, userInfo: info)
    }

    /// Up to `count` bytes (fewer only at the end of the file); nil at the end.
    public func read(upToCount count: Int) throws -> Data? {
        var data = Data(count: count)
        var filled = 0
        while filled < count {
            let got = data.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress! + filled, count - filled) }
            if got < 0 {
                if errno == EINTR { continue }
                throw Self.failure(errno, reading: true)
            }
            if got == 0 { break }
            filled += got
        }
        guard filled > 0 else { return nil }
        data.count = filled
        return data
    }

    /// The rest of the file.
    public func readToEnd() throws -> Data? {
        var result = Data()
        while let chunk = try read(upToCount: 64 << 10) {
            result.append(chunk)
            if chunk.count < 64 << 10 { break }
        }
        return result
    }

    /// Writes all of `data`.
    public func write(contentsOf data: some DataProtocol) throws {
        for region in data.regions {
            try region.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws in
                var written = 0
                while written < buffer.count {
                    let done = Glibc.write(fileDescriptor, buffer.baseAddress! + written, buffer.count - written)
                    if done < 0 {
                        if errno == EINTR { continue }
                        throw Self.failure(errno, reading: false)
                    }
                    written += done
                }
            }
        }
    }

    /// Writes `data`, ignoring failures (for the terminal).
    public func write(_ data: Data) {
        try? write(contentsOf: data)
    }

    public func seek(toOffset offset: UInt64) throws {
        guard lseek(fileDescriptor, off_t(offset), SEEK_SET) >= 0 else { throw Self.failure(errno, reading: true) }
    }

    /// Cuts the file at `offset` and moves there. A file already that long is left as it is:
    /// ext4 takes any truncate to 0, even of an empty file, for a file replaced by truncation
    /// (`auto_da_alloc`) and writes all of it to disk when it is closed, whatever was written
    /// after (found measuring `sync`: a new download's partial file, 379 MB nobody reads again,
    /// was written out beside the region's file and then discarded block by block on removal).
    public func truncate(atOffset offset: UInt64) throws {
        var status = stat()
        if fstat(fileDescriptor, &status) != 0 || status.st_size != off_t(offset) {
            guard ftruncate(fileDescriptor, off_t(offset)) == 0 else { throw Self.failure(errno, reading: false) }
        }
        try seek(toOffset: offset)
    }

    /// `fsync`.
    public func synchronize() throws {
        guard fsync(fileDescriptor) == 0 else { throw Self.failure(errno, reading: false) }
    }

    public func close() throws {
        guard !isClosed else { return }
        isClosed = true
        guard Glibc.close(fileDescriptor) == 0 else { throw Self.failure(errno, reading: false) }
    }
}
