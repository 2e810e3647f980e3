import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The journal mode an SQLite file's header records: bytes 18 and 19, the file format's write and
/// read versions, 1 for a rollback journal and 2 for WAL (sqlite.org/fileformat2.html §1.3.3).
public enum SQLiteHeader {
    /// Where the two bytes are.
    public static let journalModeOffset = 18
    static let magic = Array("SQLite format 3\u{0}".utf8)

    /// Switches a file in WAL mode that has no `-wal` beside it (so nothing is pending: a package
    /// as unpacked) to rollback-journal mode by those two bytes alone, as `PRAGMA journal_mode =
    /// DELETE` would switch it, but leaving the rest of the header as the writer left it (that
    /// pragma also counts a change and writes its own SQLite version): so the file stays the
    /// package's bytes but for these two, and ``restoringWAL`` gives the package back.
    /// Returns whether the file was in WAL mode; a file that is not SQLite is left as it is.
    public static func leaveWAL(_ path: String) throws -> Bool {
        let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw GeneralFailure(L.localized("cannot open %1$s: %2$s", path, SystemErrorReason.text(errno)), kind: .io) }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 20)
        guard pread(descriptor, &head, head.count, 0) == head.count, Array(head[0..<16]) == magic, head[18] == 2, head[19] == 2 else { return false }
        let rollback: [UInt8] = [1, 1]
        guard pwrite(descriptor, rollback, 2, off_t(journalModeOffset)) == 2 else {
            throw GeneralFailure(L.localized("cannot write %1$s: %2$s", path, SystemErrorReason.text(errno)), kind: .io)
        }
        return true
    }

    /// `chunk`, the start of a file that ``leaveWAL(_:)`` switched, with its WAL bytes put back.
    public static func restoringWAL(_ chunk: Data) -> Data {
        guard chunk.count >= journalModeOffset + 2 else { return chunk }
        var restored = chunk
        restored[restored.startIndex + journalModeOffset] = 2
        restored[restored.startIndex + journalModeOffset + 1] = 2
        return restored
    }
}
