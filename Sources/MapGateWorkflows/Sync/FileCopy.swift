import CLinux
import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// Copies a file's bytes inside the kernel (`copy_file_range(2)`), so that a region of hundreds of
/// megabytes is copied without passing through this process; falls back to reading and writing
/// where the kernel or the file system cannot (another file system, an old kernel).
enum FileCopy {
    /// Copies `source`, which must be a regular file and not a symbolic link (not a device or a
    /// FIFO that never ends, nor a link planted to make mapgate copy a file it should not read),
    /// to a new file at `destination` (which must not exist), with mode 0644: the bytes it holds
    /// when the copy starts. Starts writing the copy back to disk without waiting, so that a
    /// later fsync has little left to do. On failure the partial destination is removed.
    static func copy(from source: String, to destination: String) throws {
        // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard input >= 0 else { throw failure("cannot open \(source)") }
        defer { close(input) }
        try copy(descriptor: input, named: source, to: destination)
    }

    /// Copies the regular file open at `input` (from where its offset stands: a descriptor opened
    /// for the copy, at 0) to a new file at `destination`, as ``copy(from:to:)`` does; `source`
    /// names it in messages. The caller closes `input`.
    static func copy(descriptor input: Int32, named source: String, to destination: String) throws {
        var info = stat()
        guard fstat(input, &info) == 0 else { throw failure("cannot read \(source)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw GeneralFailure(L.localized("cannot copy %1$s: it is not a regular file", "\(source)"), kind: .io)
        }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("cannot create \(destination)") }
        do {
            defer { close(output) }
            try copyBytes(Int(info.st_size), from: input, to: output, source: source, destination: destination)
            _ = clinux_start_writeback(output, 0, 0)  // only a hint: an error here changes nothing
        } catch {
            unlink(destination)
            throw error
        }
    }

    private static func copyBytes(_ size: Int, from input: Int32, to output: Int32, source: String, destination: String) throws {
        var copied = 0
        while copied < size {
            let count = clinux_copy_file_range(input, output, min(size - copied, 1 << 30))
            if count > 0 {
                copied += count
                continue
            }
            // The file got shorter while it was copied: what is there is the copy.
            if count == 0 { return }
            if errno == EINTR { continue }
            // Nothing copied yet and the kernel cannot do it here: copy through a buffer instead.
            guard copied == 0, [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF].contains(errno) else {
                throw failure("cannot copy \(source) to \(destination)")
            }
            return try copyThroughBuffer(size, from: input, to: output, source: source, destination: destination)
        }
    }

    private static func copyThroughBuffer(_ size: Int, from input: Int32, to output: Int32, source: String, destination: String) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var copied = 0
        while copied < size {
            let count = read(input, buffer.baseAddress, min(buffer.count, size - copied))
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read \(source)") }
            if count == 0 { return }
            copied += count
            var written = 0
            while written < count {
                let result = write(output, buffer.baseAddress! + written, count - written)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw failure("cannot write \(destination)") }
                written += result
            }
        }
    }

    private static func failure(_ what: String) -> GeneralFailure {
        GeneralFailure("\(what): \(SystemErrorReason.text(errno))", kind: .io)
    }
}
