import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct SQLiteDatabaseTests {
    let directory: TemporaryDirectory
    let database: SQLiteDatabase

    init() throws {
        directory = try TemporaryDirectory()
        database = try SQLiteDatabase(path: directory.file("test.sqlite"), mode: .readWriteCreate)
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, data BLOB)")
    }

    /// No open SQLite makes blocks: a FIFO (or a device) where a database is expected is refused
    /// at once, in every mode (found by an attack on the server: a FIFO swapped in between a check
    /// and SQLite's own open held a worker in open(2) for good). A FIFO nobody writes to would
    /// block a plain open; if it does, the test lets it go by opening the other end.
    @Test(arguments: [SQLiteDatabase.Mode.readOnly, .immutable, .readWriteCreate])
    func aFIFOIsRefusedWithoutBlocking(mode: SQLiteDatabase.Mode) throws {
        let fifo = directory.file("fifo.mbtiles")
        #expect(mkfifo(fifo, 0o644) == 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<String>("")
        DispatchQueue.global().async {
            do {
                _ = try SQLiteDatabase(path: fifo, mode: mode)
                outcome.withLock { $0 = "opened" }
            } catch {
                outcome.withLock { $0 = "refused" }
            }
            done.signal()
        }
        let inTime = done.wait(timeout: .now() + 5) == .success
        if !inTime {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            done.wait()
            close(writer)
        }
        #expect(inTime, "the open blocked")
        #expect(outcome.withLock { $0 } == "refused")
        // A regular file and a database in memory still open.
        #expect(throws: Never.self) { _ = try SQLiteDatabase(path: directory.file("plain.sqlite"), mode: .readWriteCreate) }
        #expect(throws: Never.self) { _ = try SQLiteDatabase(path: ":memory:", mode: .readWriteCreate) }
    }

    @Test func errorCarriesExtendedCodeMessageAndSQL() throws {
        try database.execute("INSERT INTO t (name) VALUES (?)", [.text("a")])
        let error = #expect(throws: SQLiteError.self) {
            try database.execute("INSERT INTO t (name) VALUES (?)", [.text("a")])
        }
        #expect(error?.code == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(error?.primaryCode == 19)  // SQLITE_CONSTRAINT
        #expect(error?.message.contains("UNIQUE constraint failed: t.name") == true)
        #expect(error?.sql == "INSERT INTO t (name) VALUES (?)")
        #expect(error?.localizedDescription.contains("test.sqlite") == true)
    }

    @Test func syntaxErrorNamesTheSQL() throws {
        let error = #expect(throws: SQLiteError.self) { try database.prepare("SELEC 1") }
        #expect(error?.sql == "SELEC 1")
        #expect(error?.message.contains("syntax error") == true)
    }

    @Test func transactionRollsBackAndRethrowsTheFirstError() throws {
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try database.transaction {
                try database.execute("INSERT INTO t (name) VALUES ('inside')")
                throw Boom()
            }
        }
        #expect(try database.query("SELECT count(*) FROM t") { $0.int(0) } == [0])
    }

    @Test func transactionCommits() throws {
        let id = try database.transaction { () -> Int in
            try database.execute("INSERT INTO t (name) VALUES ('kept')")
            return try database.query("SELECT id FROM t WHERE name = 'kept'") { $0.int(0) }[0]
        }
        #expect(id == 1)
        #expect(try database.query("SELECT name FROM t") { $0.text(0) } == ["kept"])
    }

    @Test func emptyBlobReadsAsEmptyData() throws {
        try database.execute("INSERT INTO t (name, data) VALUES (?, ?)", [.text("empty"), .blob(Data())])
        try database.execute("INSERT INTO t (name, data) VALUES (?, ?)", [.text("full"), .blob(Data([1, 2, 3]))])
        let blobs = try database.query("SELECT data FROM t ORDER BY id") { $0.blob(0) }
        #expect(blobs == [Data(), Data([1, 2, 3])])
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let reader = try SQLiteDatabase(path: database.path, mode: .readOnly)
        let error = #expect(throws: SQLiteError.self) {
            try reader.execute("INSERT INTO t (name) VALUES ('x')")
        }
        #expect(error?.primaryCode == 8)  // SQLITE_READONLY
    }

    @Test func readOnlyOpenOfAMissingFileFails() throws {
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(path: directory.file("missing.sqlite"), mode: .readOnly)
        }
        #expect(error?.path?.hasSuffix("missing.sqlite") == true)
    }

    @Test func corruptRealFileIsReportedAsCorruption() throws {
        let path = try TestPaths.shared("mbtiles/node-mbtiles-corrupt.mbtiles")
        let error = #expect(throws: SQLiteError.self) {
            let corrupt = try SQLiteDatabase(path: path, mode: .readOnly)
            _ = try corrupt.query("SELECT count(*) FROM tiles") { $0.int(0) }
        }
        #expect(error?.isCorruption == true)
        #expect(error?.kind == .badData)
    }

    @Test func busyTimeoutWaitsForAnotherWriter() throws {
        let other = try SQLiteDatabase(path: database.path, mode: .readWriteCreate, busyTimeout: .milliseconds(50))
        try database.execute("BEGIN IMMEDIATE")
        let error = #expect(throws: SQLiteError.self) { try other.execute("BEGIN IMMEDIATE") }
        #expect(error?.primaryCode == 5)  // SQLITE_BUSY after the timeout
        try database.execute("COMMIT")
        try other.execute("BEGIN IMMEDIATE; COMMIT")
    }
}
