import CLinux
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Copies a file's bytes inside the kernel (`copy_file_range(2)`), so that a region of hundreds of
/// megabytes is copied without passing through this process; falls back to reading and writing
/// where the kernel or the file system cannot (another file system, an old kernel).
enum FileCopy {
    /// Copies `source` to a new file at `destination` (which must not exist), with mode 0644,
    /// and starts writing the copy back to disk without waiting, so that a later fsync has little
    /// left to do. On failure the partial destination is removed.
    static func copy(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("cannot open \(source)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("cannot create \(destination)") }
        do {
            defer { close(output) }
            try copyBytes(from: input, to: output, source: source, destination: destination)
            _ = clinux_start_writeback(output, 0, 0)  // only a hint: an error here changes nothing
        } catch {
            unlink(destination)
            throw error
        }
    }

    private static func copyBytes(from input: Int32, to output: Int32, source: String, destination: String) throws {
        var copied = 0
        while true {
            let count = clinux_copy_file_range(input, output, 1 << 30)
            if count > 0 {
                copied += count
                continue
            }
            // Some kernels copy nothing from files that report no size (procfs) and say 0 at
            // once: the buffer then tells an empty file from one the kernel could not copy.
            if count == 0 { return copied > 0 ? () : try copyThroughBuffer(from: input, to: output, source: source, destination: destination) }
            if errno == EINTR { continue }
            // Nothing copied yet and the kernel cannot do it here: copy through a buffer instead.
            guard copied == 0, [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF].contains(errno) else {
                throw failure("cannot copy \(source) to \(destination)")
            }
            return try copyThroughBuffer(from: input, to: output, source: source, destination: destination)
        }
    }

    private static func copyThroughBuffer(from input: Int32, to output: Int32, source: String, destination: String) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(input, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read \(source)") }
            if count == 0 { return }
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
        GeneralFailure("\(what): \(String(cString: strerror(errno)))", kind: .io)
    }
}
