import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Writes a small file whole or not at all: into a temporary name beside it (`.NAME.PID.tmp`),
/// flushed to disk, then renamed over the destination and the folder flushed (``DurableFile``).
/// A crash leaves the old file or the new one, and at worst a temporary file that is never read.
public enum AtomicFile {
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws {
        let parent = PathText.deletingLastComponent(path)
        let folder = parent.isEmpty ? "." : parent
        let temporary = folder + "/." + PathText.lastComponent(path) + ".\(getpid()).tmp"
        func fail(_ reason: String) -> GeneralFailure {
            try? FileManager.default.removeItem(atPath: temporary)
            return GeneralFailure(L.localized("cannot write %1$s: %2$s", "\(path)", "\(reason)"), kind: .io)
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw fail(String(cString: strerror(errno))) }
        let written = data.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += count
            }
            return fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        }
        close(descriptor)
        if let written { throw fail(written) }
        if let reason = DurableFile.rename(temporary, over: path, folder: folder) { throw fail(reason) }
    }
}
