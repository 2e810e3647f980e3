import Foundation
import MapGate
import MapGateStorage
import TestSupport
import Testing

/// SQLite's locks are POSIX record locks, which belong to the process: closing *any* descriptor of
/// the file drops every lock the process holds on it, those of its SQLite connections included
/// (sqlite.org/howtocorrupt.html, 2.2). Found looking into a CI failure (a `tile` run's journal
/// deleted under it, another's reserved use gone from the record): mapgate read a state file's
/// header with a descriptor of its own (is it in WAL mode?) after every change of the gate's
/// record and on every read-only open, and a server's other thread inside a transaction on that
/// file lost its locks; another process then took the journal for one a killed writer left and
/// rolled the change back under it. A look at the file from inside a process must leave the
/// locks of its connections as they were: a writer outside still finds the file locked.
@Suite struct StateDatabaseLockTests {
    let directory: TemporaryDirectory
    let data: DataDirectory

    init() throws {
        directory = try TemporaryDirectory()
        data = DataDirectory(path: directory.file("data"))
        _ = try StateDatabase(directory: data)
    }

    /// Whether a writer in another process can begin a change now (sqlite3 waits for no lock).
    func anotherProcessCanWrite() throws -> Bool {
        let result = try runProcess("/usr/bin/sqlite3", [data.statePath, "BEGIN IMMEDIATE; ROLLBACK;"])
        #expect(result.status == 0 || result.stderr.contains("locked"), "\(result.status): \(result.stderr)")
        return result.status == 0
    }

    /// Runs `look` while a connection of this process holds a change open on the state file.
    func whileAChangeIsOpen(_ look: () throws -> Void) throws -> Bool {
        let writer = try SQLiteDatabase(path: data.statePath, mode: .readWriteCreate)
        try writer.execute("BEGIN IMMEDIATE")
        defer { try? writer.execute("ROLLBACK") }
        #expect(try !anotherProcessCanWrite(), "the open change locks the file")
        try look()
        return try anotherProcessCanWrite()
    }

    @Test func askingTheJournalModeKeepsTheLocks() throws {
        var isWAL = true
        #expect(try !whileAChangeIsOpen { isWAL = StateDatabase.isWAL(data.statePath) }, "a writer outside got in")
        #expect(!isWAL)
        // A file in WAL mode (an older mapgate's) is still told, and nothing is made beside it.
        let old = directory.file("old.sqlite")
        #expect(try runProcess("/usr/bin/sqlite3", [old, "PRAGMA journal_mode=WAL; CREATE TABLE t (x);"]).status == 0)
        #expect(StateDatabase.isWAL(old))
        #expect(!FileManager.default.fileExists(atPath: old + "-wal") && !FileManager.default.fileExists(atPath: old + "-shm"))
    }

    @Test func openingToReadKeepsTheLocks() throws {
        #expect(try !whileAChangeIsOpen { _ = try StateDatabase.reading(directory: data).database.query("PRAGMA user_version") { $0.int(0) } }, "a writer outside got in")
    }
}
