import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where the files of one local folder are read from when this process may not enter the folder
/// itself: system mode's `sync --from DIR`, whose folder (a USB stick the desktop mounted for its
/// user alone) the caller's own process opens, file by file, with the caller's rights, and hands
/// over as open descriptors. ``HTTPClient/localFiles`` reads `file://` URLs under ``folder``
/// through it; every other path is the file system's, as before.
public protocol LocalFileSource: Sendable {
    /// The folder's path as the URLs name it (the caller's own path for it: messages name it).
    var folder: String { get }
    /// What `lstat` says of the file at `path` (under ``folder``).
    func status(of path: String) throws(LocalFileError) -> LocalFileStatus
    /// The regular file at `path`, opened for reading, not through a symbolic link; the caller
    /// closes the descriptor.
    func open(_ path: String) throws(LocalFileError) -> Int32
}

/// A file's type (`st_mode`) and size, as `lstat` gives them.
public struct LocalFileStatus: Codable, Sendable, Equatable {
    public var mode: UInt32
    public var size: Int64

    public init(mode: UInt32, size: Int64) {
        self.mode = mode
        self.size = size
    }

    public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    public var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }
}

/// Why a local file could not be looked at or opened: the system's `errno`.
public struct LocalFileError: Error, Sendable, Equatable {
    public var code: Int32

    public init(code: Int32) {
        self.code = code
    }
}

extension HTTPClient {
    /// The source that answers for `path`, if one does (a path under its folder).
    func localSource(for path: String) -> (any LocalFileSource)? {
        guard let localFiles, path.hasPrefix(localFiles.folder + "/") else { return nil }
        return localFiles
    }

    /// `lstat` of the local file at `path`: through ``localFiles`` under its folder, else the
    /// file system's own.
    public func localStatus(_ path: String) throws(LocalFileError) -> LocalFileStatus {
        if let source = localSource(for: path) { return try source.status(of: path) }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw LocalFileError(code: errno) }
        return LocalFileStatus(mode: UInt32(info.st_mode), size: Int64(info.st_size))
    }

    /// A `file://` request answered from a descriptor ``localFiles`` opened: read here, as
    /// libcurl would read the file (no status, the body from `fileOffset` to the end). An open
    /// that fails is libcurl's "couldn't open file" (37), a read that fails its read error (26).
    func streamLocal(
        _ request: HTTPRequest, path: String, from source: any LocalFileSource,
        onHead: (HTTPResponseHead) throws -> Void, progress: ((Int64, Int64) -> Bool)?, onBody: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> HTTPResponseHead {
        let descriptor: Int32
        do {
            descriptor = try source.open(path)
        } catch {
            throw HTTPError.transport(code: 37, message: SystemErrorReason.text(error.code), url: request.url)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw HTTPError.transport(code: 26, message: SystemErrorReason.text(errno), url: request.url) }
        let head = HTTPResponseHead(status: 0, headers: [], effectiveURL: request.url)
        try onHead(head)
        let start = max(0, request.fileOffset)
        let expected = max(0, Int64(info.st_size) - start)
        var offset = start
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count < 0 {
                if errno == EINTR { continue }
                throw HTTPError.transport(code: 26, message: SystemErrorReason.text(errno), url: request.url)
            }
            if count == 0 { return head }
            try onBody(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
            if let progress, !progress(offset - start, expected) { throw HTTPError.cancelled(url: request.url) }
        }
    }
}
