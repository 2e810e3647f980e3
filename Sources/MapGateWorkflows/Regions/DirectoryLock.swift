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

    /// Runs `body` while no writer is changing `directory`: holding the lock shared (`flock`
    /// `LOCK_SH`, which keeps writers out but not other readers), after waiting up to `timeout`
    /// seconds for a writer to finish (`onWait` called once if it must). For a reader that found
    /// something wrong and must know whether a writer was half-way (`verify` during a `remove`).
    /// Runs `body` without waiting when there is no lock file (no writer has ever run), it cannot
    /// be read, or the writer is still at work after `timeout`: what is read then is as it stands.
    public static func withoutWriters<T>(in directory: DataDirectory, timeout: Double, onWait: () -> Void = {}, _ body: () throws -> T) rethrows -> T {
        let fd = open(directory.lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return try body() }
        defer { close(fd) }
        let deadline = MonotonicClock.seconds + timeout
        var waited = false
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, MonotonicClock.seconds < deadline else { return try body() }
            if !waited {
                onWait()
                waited = true
            }
            usleep(50_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

/// Free bytes for an unprivileged user on the file system holding `path`.
public func freeDiskSpace(at path: String) -> Int64? {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return nil }
    return Int64(stats.f_bavail) * Int64(stats.f_frsize)
}
