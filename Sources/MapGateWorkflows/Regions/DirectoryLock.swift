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
            // A holder that is stopped (Ctrl-Z, SIGSTOP) will not finish by itself: said at once,
            // with what to do (found by an attack: every other run waited its 30 s, then failed
            // saying only that the lock was held; in system mode, every administrator's).
            if let holder = Self.holder(of: fd), ProcessIdentity.isStopped(pid: holder) {
                close(fd)
                throw GeneralFailure(
                    L.localized(
                        "another mapgate (process %1$s) is changing %2$s and is stopped (Ctrl-Z): continue it (fg) or end it, then try again", "\(holder)", "\(folder)"),
                    kind: .busy)
            }
            guard Date() < deadline else {
                close(fd)
                throw GeneralFailure(
                    timeout > 0
                        ? L.localized("another mapgate is changing %1$s (lock %2$s held for over %3$s s); try again when it has finished", "\(folder)", "\(lockPath)", "\(Int(timeout))")
                        : L.localized("another mapgate is changing %1$s (lock %2$s is held); try again when it has finished", "\(folder)", "\(lockPath)"),
                    kind: .busy)
            }
            usleep(100_000)
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// The process holding the `flock` of the file open at `descriptor`, from `/proc/locks`
    /// (`1: FLOCK  ADVISORY  WRITE PID MAJOR:MINOR:INODE 0 EOF`, the device in hex); nil when it
    /// cannot be told (another PID namespace's process shows as 0 or not at all).
    static func holder(of descriptor: Int32) -> Int32? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        // glibc's gnu_dev_major and gnu_dev_minor (macros Swift cannot call).
        let dev = UInt64(info.st_dev)
        let major = ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~UInt64(0xFFF))
        let minor = (dev & 0xFF) | ((dev >> 12) & ~UInt64(0xFF))
        func hex(_ value: UInt64) -> String { let text = String(value, radix: 16); return text.count < 2 ? "0" + text : text }
        let device = "\(hex(major)):\(hex(minor)):\(info.st_ino)"
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == Substring(device), let pid = Int32(fields[4]), pid > 0 else { continue }
            return pid
        }
        return nil
    }

    /// Waits up to `timeout` seconds until no writer holds `directory`'s lock (`onWait` called
    /// once if it must), without holding it after: for a reader that found something wrong and
    /// must know whether a writer was half-way (`verify` during a `remove`). A reader never holds
    /// the lock while it works, so no reader, however often it runs, keeps a writer out. Returns at
    /// once when there is no lock file (no writer has ever run) or it cannot be read.
    public static func waitForWriters(in directory: DataDirectory, timeout: Double, onWait: () -> Void = {}) {
        let fd = openToLook(directory)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let deadline = MonotonicClock.seconds + timeout
        var waited = false
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, MonotonicClock.seconds < deadline else { return }
            if !waited {
                onWait()
                waited = true
            }
            usleep(50_000)
        }
        flock(fd, LOCK_UN)
    }

    /// Whether a writer holds `directory`'s lock now (false when it cannot be told).
    public static func isHeld(in directory: DataDirectory) -> Bool {
        let fd = openToLook(directory)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(fd, LOCK_UN)
        return false
    }

    /// The lock file opened to look at, never made (-1 when it cannot be): a reader may take the
    /// lock shared on it, which keeps a writer out only while it is held.
    private static func openToLook(_ directory: DataDirectory) -> Int32 {
        open(directory.lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    }
}

/// Free bytes for an unprivileged user on the file system holding `path`.
public func freeDiskSpace(at path: String) -> Int64? {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return nil }
    return Int64(stats.f_bavail) * Int64(stats.f_frsize)
}
