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

    public init(folder: String) throws {
        let path = folder + "/" + Self.fileName
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard opened >= 0 else {
            throw GeneralFailure(L.localized("cannot open the lock file %1$s: %2$s", "\(path)", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = SystemErrorReason.text(errno)
            close(opened)
            if busy {
                throw GeneralFailure(L.localized("another mapgate mirror is writing %1$s; run this one when it has finished", "\(folder)"), kind: .failure)
            }
            throw GeneralFailure(L.localized("cannot lock %1$s: %2$s", "\(path)", "\(reason)"), kind: .io)
        }
        descriptor = opened
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
