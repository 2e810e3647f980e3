import CLinux
import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The lock one `mapgate mirror` holds on the mirror folder it writes (`.mapgate-mirror.lock`,
/// `flock`): a second writer of the same folder is refused at once instead of removing the
/// first one's half-written packages, so two writers can never both say "done" for a mirror that
/// lacks a region. Released when the value goes.
public final class MirrorLock {
    private let descriptor: Int32
    public static let fileName = ".mapgate-mirror.lock"

    /// Where the folder's file system has no locks (`flock` fails with ENOLCK: an NFS share
    /// without its lock service; found by an attack, `mirror` then refused with the system's bare
    /// words), the lock is an abstract local socket named after the folder's device and inode:
    /// every writer of this machine sees it, whoever they are (found by the attack on a first
    /// stand-in, a file in each user's runtime folder, which let two users write at once, and one
    /// in `/tmp`, which another user could keep), and it goes with its holder, as `flock`'s does.
    public init(folder: String) throws {
        let path = folder + "/" + Self.fileName
        do {
            descriptor = try Self.lock(path, folder: folder)
        } catch let error as Unsupported {
            var info = stat()
            guard stat(folder, &info) == 0 else { throw GeneralFailure(L.localized("cannot lock %1$s: %2$s", "\(path)", error.reason), kind: .io) }
            let held = clinux_abstract_lock("mapgate-mirror-\(info.st_dev)-\(info.st_ino)")
            guard held >= 0 else {
                if errno == EADDRINUSE {
                    throw GeneralFailure(L.localized("another mapgate mirror is writing %1$s; run this one when it has finished", "\(folder)"), kind: .failure)
                }
                throw GeneralFailure(L.localized("cannot lock %1$s: %2$s", "\(path)", SystemErrorReason.text(errno)), kind: .io)
            }
            descriptor = held
        }
    }

    /// `flock` is not supported where the lock file is.
    private struct Unsupported: Error {
        let reason: String
    }

    private static func lock(_ path: String, folder: String) throws -> Int32 {
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard opened >= 0 else {
            // A link in its place is said as one, with what to do (found by an attack: "too many
            // symbolic links", and no remedy).
            if errno == ELOOP {
                throw GeneralFailure(
                    L.localized("the lock file %1$s is a symbolic link, which mapgate does not follow: remove it and write the mirror again", "\(path)"), kind: .io)
            }
            throw GeneralFailure(L.localized("cannot open the lock file %1$s: %2$s", "\(path)", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let number = errno
            let reason = SystemErrorReason.text(number)
            close(opened)
            if number == EWOULDBLOCK {
                throw GeneralFailure(L.localized("another mapgate mirror is writing %1$s; run this one when it has finished", "\(folder)"), kind: .failure)
            }
            if [ENOLCK, EOPNOTSUPP, ENOSYS].contains(number) { throw Unsupported(reason: reason) }
            throw GeneralFailure(L.localized("cannot lock %1$s: %2$s", "\(path)", "\(reason)"), kind: .io)
        }
        return opened
    }

    deinit {
        // Closing lets go of either lock: the `flock` (this is its only descriptor) or the socket's name.
        close(descriptor)
    }
}
