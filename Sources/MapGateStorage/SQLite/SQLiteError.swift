import CSQLite
import FoundationEssentials
import Glibc
import MapGateBase

/// A failed SQLite call: the extended result code, SQLite's message and the SQL that ran.
public struct SQLiteError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// The extended result code (`SQLITE_CORRUPT`, `SQLITE_BUSY_SNAPSHOT`, …).
    public let code: Int32
    public let message: String
    public let sql: String?
    /// The database file, when known.
    public let path: String?
    /// The system's `errno` behind the failure (`sqlite3_system_errno`), 0 when none.
    public let systemErrno: Int32

    public init(code: Int32, message: String, sql: String? = nil, path: String? = nil, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
        self.systemErrno = systemErrno
    }

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether the file is damaged or not a database at all.
    public var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    /// The system failed a read or a write (`SQLITE_IOERR`): the disk, not the database.
    public var isIOError: Bool { primaryCode == SQLITE_IOERR }

    public var kind: FailureKind { isCorruption ? .badData : .io }

    /// The file could not be read at all (the disk's error, no permission to open it): nothing
    /// is said about what it holds.
    public var isUnreadable: Bool { isIOError || primaryCode == SQLITE_CANTOPEN || primaryCode == SQLITE_PERM }

    /// A read-only connection found a change another connection began and never finished (a
    /// hot journal: the writer was killed), which only a connection that may write can undo
    /// (`SQLITE_READONLY_ROLLBACK`, a macro Swift does not import). The file holds that writer's
    /// half-written pages until then.
    public var isUnfinishedChange: Bool { code == SQLITE_READONLY | (3 << 8) }

    /// Whether the failure is one of writing (a full disk, a read-only file or folder, an I/O
    /// error, a file that cannot be made): a reader may still get what it needs another way.
    public var isWriteFailure: Bool {
        [SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN].contains(primaryCode)
    }

    /// Whether the disk holding the file is full: `SQLITE_FULL`, or an I/O error while the file
    /// system has (almost) no space left (a WAL's `-shm` that cannot grow says only "disk I/O error").
    public var isDiskFull: Bool {
        if primaryCode == SQLITE_FULL { return true }
        guard primaryCode == SQLITE_IOERR || primaryCode == SQLITE_CANTOPEN, let path else { return false }
        var info = statvfs()
        let folder = PathText.deletingLastComponent(path)
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return false }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 << 10
    }

    /// The system's reason behind a failure to write: ``systemErrno``, or, when SQLite lost it on
    /// an I/O error (it reads `errno` after it has cleaned up: 0 after a failed `COMMIT`), `EFBIG`
    /// while the process has a file size limit (`ulimit -f`), the likeliest reason there (found
    /// by an attack: "disk I/O error" where data-directory.md promises the limit named). Not for
    /// a read-only file or one that cannot be opened, which say their own reason.
    public var writeErrno: Int32 {
        guard systemErrno == 0, primaryCode == SQLITE_IOERR, FileSizeLimit.bytes != nil else { return systemErrno }
        return EFBIG
    }

    public var errorDescription: String? {
        // A file the system would not open or write: the system's reason in mapgate's words
        // first ("the file system is read-only"), SQLite's code and words after.
        let systemErrno = writeErrno
        if systemErrno != 0, isWriteFailure {
            let reason = isDiskFull ? SystemErrorReason.text(ENOSPC) : SystemErrorReason.text(systemErrno)
            // The statement is left out: a full disk or a read-only file is the whole story (found
            // by an attack: a delta's full disk said fifteen lines of SQL to the user).
            return L.localized("%1$s: %2$s (SQLite error %3$s: %4$s)", path ?? "SQLite", reason, "\(code)", message)
        }
        var text = isDiskFull ? L.localized("the disk is full: SQLite error %1$s", "\(code)") : L.localized("SQLite error %1$s", "\(code)")
        if let path { text += " in \(path)" }
        text += ": \(message)"
        if let sql, !isDiskFull { text += L.localized(" (while running: %1$s)", "\(Self.shortened(sql))") }
        return text
    }

    /// A statement on one line, at most 200 characters: enough to tell which one failed.
    static func shortened(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
}
