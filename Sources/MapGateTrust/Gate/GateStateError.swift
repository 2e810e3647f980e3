import CSQLite
import FoundationEssentials
import MapGateBase
import MapGateStorage

#if canImport(Glibc)
import Glibc
#endif

/// A copy of the gate's state could not be written (a read-only file or folder, a full disk):
/// the gate fails closed for this run, since a use it cannot record is not allowed. Says which
/// file and what to do, instead of SQLite's words and SQL.
public struct GateStateError: MapGateFailure, LocalizedError, Sendable {
    public let path: String
    public let reason: String
    public let advice: String
    /// A write failure (a full disk, a read-only file or folder), not another process's lock.
    let isWriteFailure: Bool
    /// Another process's lock, waited for as long as allowed.
    let isBusy: Bool
    public var kind: FailureKind { .io }
    public var errorDescription: String? {
        L.localized("cannot write the update gate's state %1$s: %2$s; %3$s", "\(path)", "\(reason)", "\(advice)")
    }

    init(_ error: SQLiteError, path fallback: String) {
        path = error.path ?? fallback
        isWriteFailure = error.isWriteFailure
        isBusy = error.primaryCode == SQLITE_BUSY
        if error.primaryCode == SQLITE_BUSY {
            reason = L.localized("another process holds it open (a reader such as sqlite3 or a backup tool)")
            advice = L.localized("close that process, then run the command again; nothing was counted")
        } else if error.isDiskFull {
            reason = "the disk is full"
            advice = "free some space, then run the command again"
        } else if error.writeErrno == EFBIG {
            reason = SystemErrorReason.text(EFBIG)
            advice = L.localized("raise the limit (ulimit -f unlimited), then run the command again; nothing was counted")
        } else if error.primaryCode == SQLITE_READONLY || access(path, W_OK) != 0 {
            reason = "it is read-only (\(error.message))"
            advice = "make it and its folder writable by you (chmod u+w), then run the command again"
        } else {
            reason = error.message
            advice = "check the file and its folder, then run the command again"
        }
    }
}
