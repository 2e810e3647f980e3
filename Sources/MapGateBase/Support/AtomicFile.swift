import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Writes a small file whole or not at all: into a temporary name beside it (`.NAME.PID.tmp`),
/// flushed to disk, then renamed over the destination and the folder flushed (``DurableFile``).
/// A crash leaves the old file or the new one, and at worst a temporary file that is never read.
public enum AtomicFile {
    /// Removes what killed writers left in `folder`: `.NAME.PID.tmp` files of processes that no
    /// longer run, and Foundation's `.dat.nosync*` files (older mapgates wrote some files with
    /// Foundation's atomic write). Best effort; run by whoever holds the folder's lock.
    public static func removeLeftovers(in folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(".") {
            if name.hasPrefix(".dat.nosync") {
                unlink(folder + "/" + name)
                continue
            }
            guard name.hasSuffix(".tmp") else { continue }
            let parts = name.dropLast(4).split(separator: ".")
            guard let pid = parts.last.flatMap({ Int32($0) }), pid > 0, kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(folder + "/" + name)
        }
    }

    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws {
        let parent = PathText.deletingLastComponent(path)
        let folder = parent.isEmpty ? "." : parent
        let temporary = folder + "/." + PathText.lastComponent(path) + ".\(getpid()).tmp"
        func fail(_ reason: String) -> GeneralFailure {
            try? FileManager.default.removeItem(atPath: temporary)
            return GeneralFailure(L.localized("cannot write %1$s: %2$s", "\(path)", "\(reason)"), kind: .io)
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw fail(SystemErrorReason.text(errno)) }
        let written = data.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return SystemErrorReason.text(errno)
                }
                offset += count
            }
            return fsync(descriptor) == 0 ? nil : SystemErrorReason.text(errno)
        }
        close(descriptor)
        if let written { throw fail(written) }
        if let reason = DurableFile.rename(temporary, over: path, folder: folder) { throw fail(reason) }
    }
}
