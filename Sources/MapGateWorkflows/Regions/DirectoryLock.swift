import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The one-writer lock of a data directory (`flock` on `<data>/lock`), released in `deinit`.
public final class DirectoryLock {
    private let descriptor: Int32

    /// Takes the lock, waiting up to `timeout` seconds for another mapgate to finish.
    /// `onWait` is called once if the lock is busy.
    public convenience init(directory: DataDirectory, timeout: Double = 30, onWait: () -> Void = {}) throws {
        try directory.prepare()
        try self.init(lockPath: directory.lockPath, folder: directory.path, timeout: timeout, onWait: onWait)
    }

    /// Takes the lock of `folder` (`flock` on `lockPath`, made if missing), waiting up to
    /// `timeout` seconds (0: not at all).
    public init(lockPath: String, folder: String, timeout: Double, onWait: () -> Void = {}) throws {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw GeneralFailure(L.localized("cannot open the lock file %1$s: %2$s", "\(lockPath)", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        let deadline = Date().addingTimeInterval(timeout)
        var waited = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(fd)
                throw GeneralFailure(L.localized("cannot lock %1$s: %2$s", "\(lockPath)", "\(SystemErrorReason.text(errno))"), kind: .io)
            }
            if !waited {
                onWait()
                waited = true
            }
            guard Date() < deadline else {
                close(fd)
                throw GeneralFailure(
                    timeout > 0
                        ? L.localized("another mapgate is changing %1$s (lock %2$s held for over %3$s s); try again when it has finished", "\(folder)", "\(lockPath)", "\(Int(timeout))")
                        : L.localized("another mapgate is changing %1$s (lock %2$s is held); try again when it has finished", "\(folder)", "\(lockPath)"),
                    kind: .failure)
            }
            usleep(100_000)
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Free bytes for an unprivileged user on the file system holding `path`.
public func freeDiskSpace(at path: String) -> Int64? {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return nil }
    return Int64(stats.f_bavail) * Int64(stats.f_frsize)
}
