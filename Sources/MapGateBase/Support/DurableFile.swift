import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The two steps of putting a checked file in place so that a crash leaves either the old file or
/// the new one, whole: its bytes on disk first, then a rename, then the folder's entry on disk.
/// Each returns nil, or the system's reason.
package enum DurableFile {
    /// fsyncs the file's bytes.
    package static func flush(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            let reason = SystemErrorReason.text(errno)
            if descriptor >= 0 { close(descriptor) }
            return reason
        }
        close(descriptor)
        return nil
    }

    /// Renames `path` over `destination` and fsyncs the folder holding it.
    package static func rename(_ path: String, over destination: String, folder: String) -> String? {
        guard Glibc.rename(path, destination) == 0 else { return SystemErrorReason.text(errno) }
        syncFolder(folder)
        return nil
    }

    /// fsyncs a folder, so that the entries just made or renamed in it are on disk (best effort:
    /// some file systems cannot).
    package static func syncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }
}
