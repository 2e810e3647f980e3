import FoundationEssentials
import Glibc
import MapGateBase

/// One read-only file descriptor on an archive, closed in `deinit`, read with `pread` at checked
/// offsets, or mapped read-only whole (``mapped()``) for reading every tile in one pass. Not
/// `Sendable`.
final class PMTilesFileReader {
    let path: String
    let size: UInt64
    private let descriptor: Int32
    /// The whole file mapped read-only by ``mapped()``, unmapped in `deinit`.
    private var mapping: UnsafeRawBufferPointer?
    private var mappingFailed = false

    init(path: String) throws {
        self.path = path
        if let reason = FileManager.default.notRegularFileReason(atPath: path) { throw PMTilesError(path: path, reason: reason) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw PMTilesError(path: path, reason: L.localized("cannot open it: %1$s", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(fd)
            throw PMTilesError(path: path, reason: L.localized("not a regular file"))
        }
        descriptor = fd
        size = UInt64(info.st_size)
    }

    deinit {
        if let mapping { munmap(UnsafeMutableRawPointer(mutating: mapping.baseAddress), mapping.count) }
        Glibc.close(descriptor)
    }

    /// The whole file (``size`` bytes, as `fstat` gave it when opened) mapped read-only, for a
    /// pass over every tile without a `pread` and a copy for each; nil when it cannot be mapped
    /// (an empty or huge file, no address space): callers ``read(offset:length:)`` instead.
    /// Valid while this reader lives. Like SQLite's own memory-mapped I/O, a file cut shorter by
    /// another process while it is mapped stops the process (SIGBUS) instead of failing a read.
    func mapped() -> UnsafeRawBufferPointer? {
        if let mapping { return mapping }
        guard !mappingFailed, size > 0, size <= UInt64(Int.max) else { return nil }
        let address = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let address, address != MAP_FAILED else {
            mappingFailed = true
            return nil
        }
        _ = madvise(address, Int(size), MADV_WILLNEED)
        mapping = UnsafeRawBufferPointer(start: address, count: Int(size))
        return mapping
    }

    /// `length` bytes at `offset`; the range must lie in the file (callers check it first).
    func read(offset: UInt64, length: UInt64) throws -> Data {
        guard length <= UInt64(Int.max), offset <= size, length <= size - offset else {
            throw PMTilesError(path: path, reason: L.localized("bytes %1$s–%2$s lie past the end of the file (%3$s bytes)", "\(offset)", "\(offset &+ length)", "\(size)"))
        }
        switch PositionalRead.read(descriptor, offset: offset, length: Int(length)) {
        case .success(let data): return data
        case .failure(let failure): throw PMTilesError(path: path, reason: L.localized("cannot read it: %1$s", failure.reason), kind: .io)
        }
    }
}
