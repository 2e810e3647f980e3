import CSQLite
import FoundationEssentials
import Synchronization
import MapGateBase

/// Owns one SQLite connection: opened in `init`, closed in `deinit`.
///
/// Not `Sendable`: a connection is confined to one thread, which lets SQLite's own mutex stay off
/// (`SQLITE_OPEN_NOMUTEX`).
public final class SQLiteDatabase {
    public enum Mode: Sendable {
        /// For files mapgate only reads (installed regions, packages being validated).
        case readOnly
        /// For files nobody changes while they are open (installed regions being served: an
        /// update replaces the file by `rename`, it never writes into it). SQLite then takes no
        /// locks and checks for no journal on each query.
        case immutable
        /// Read and write, creating the file when missing.
        case readWriteCreate
        /// Read and write a file that must be there: one removed under the caller (a signal's
        /// cleanup) is an error, not a new empty database.
        case readWrite
    }

    let connection: OpaquePointer
    public let path: String

    /// Whether SQLite opened the main database read-only (asked for read-write, it falls back to
    /// read-only without an error when the file or its folder cannot be written).
    public var isReadOnly: Bool { sqlite3_db_readonly(connection, "main") == 1 }

    /// Whether the file's header says WAL mode (``SQLiteHeader``'s two bytes), read through this
    /// connection's own open file: a descriptor of one's own, closed, would drop every lock this
    /// process holds on the file, its other connections' included. False for an empty file.
    public var isWALFile: Bool {
        var header = [UInt8](repeating: 0, count: SQLiteHeader.journalModeOffset + 2)
        guard csqlite_read_main_file(connection, &header, Int32(header.count)) == SQLITE_OK else { return false }
        return header[SQLiteHeader.journalModeOffset] == 2 && header[SQLiteHeader.journalModeOffset + 1] == 2
    }

    /// No open SQLite makes can block (``csqlite_open_without_blocking``): set once, before the
    /// first database is opened.
    private static let opensWithoutBlocking: Void = { _ = csqlite_open_without_blocking() }()

    public init(path: String, mode: Mode, busyTimeout: Duration = .seconds(10)) throws {
        _ = Self.opensWithoutBlocking
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var target = path
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            let escaped = path.percentEncoded(allowing: \.isURLPathAllowed)
            target = "file:\(escaped)?immutable=1"
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(target, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let system = handle.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: message, path: path, systemErrno: system)
        }
        self.connection = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = busyTimeout.components.seconds * 1000
            + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    deinit {
        sqlite3_close_v2(connection)
    }

    /// How many statements and transactions (``execute(_:)``, ``query(_:_:read:)``,
    /// ``transaction(_:_:)``) this process has under way: each may hold a lock of its database
    /// that other processes wait for. A run asked to stop (Ctrl-Z, which the system service passes
    /// on to the command it runs for a user) waits until there are none, so that it never stops
    /// holding one (found by an attack: a user's Ctrl-Z at the right moment stopped the service's
    /// command inside a transaction, and every user's command failed on the locked state database
    /// for as long as it stayed stopped).
    public static let callsUnderWay = Atomic<Int>(0)

    /// Set while this process stops itself (Ctrl-Z) once no call is under way: a call that would
    /// begin when none is under way waits until the process has gone on, so that the stop never
    /// lands inside one begun between the look and the stop (found by CI under load: the command
    /// began its next transaction in that moment, stopped holding the state database, and the
    /// next user's command failed on its lock). Calls within a call under way (a transaction's
    /// statements, another thread's) go on: the stop waits for them.
    public static let stopping = Atomic<Bool>(false)

    private func underWay<T>(_ body: () throws -> T) rethrows -> T {
        // Each side looks at the other's word after writing its own (sequentially consistent):
        // either this call sees the stop coming, or the stop sees this call under way.
        while Self.callsUnderWay.add(1, ordering: .sequentiallyConsistent).oldValue == 0, Self.stopping.load(ordering: .sequentiallyConsistent) {
            Self.callsUnderWay.subtract(1, ordering: .sequentiallyConsistent)
            usleep(1000)
        }
        defer { Self.callsUnderWay.subtract(1, ordering: .releasing) }
        return try body()
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws {
        try underWay { try check(sqlite3_exec(connection, sql, nil, nil, nil), sql: sql) }
    }

    /// Runs one statement with arguments, discarding any rows.
    public func execute(_ sql: String, _ arguments: [SQLiteValue]) throws {
        try underWay {
            let statement = try prepare(sql)
            try statement.bind(arguments)
            while try statement.step() {}
        }
    }

    public func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql)
    }

    /// The rows of a query, each read by `read`.
    public func query<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], read: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        try underWay {
            let statement = try prepare(sql)
            try statement.bind(arguments)
            var rows: [T] = []
            while try statement.step() { rows.append(try read(statement)) }
            return rows
        }
    }

    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        /// Takes the write lock at once: use it for read-modify-write, so that two processes
        /// never both read the old value.
        case immediate = "IMMEDIATE"
    }

    /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
    public func setBusyTimeout(_ timeout: Duration) {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(connection, Int32(clamping: milliseconds))
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws and
    /// rethrows that first error (a failing ROLLBACK never hides it).
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try underWay { try transactionBody(kind, body) }
    }

    private func transactionBody<T>(_ kind: TransactionKind, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }

    /// Throws a ``SQLiteError`` for any code other than OK, ROW and DONE.
    func check(_ code: Int32, sql: String?) throws {
        switch code {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return
        default:
            throw SQLiteError(
                code: sqlite3_extended_errcode(connection),
                message: String(cString: sqlite3_errmsg(connection)), sql: sql, path: path, systemErrno: sqlite3_system_errno(connection))
        }
    }
}
