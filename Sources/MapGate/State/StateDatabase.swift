import Foundation

/// The state database (`state.sqlite`): gate state and installed regions.
///
/// A damaged file is moved aside (`state.sqlite.damaged-<time>`) and a fresh one started; the
/// move is reported in ``recoveryNote`` and never crashes a run.
public final class StateDatabase {
    public let database: SQLiteDatabase
    /// Set when a damaged database was moved aside while opening.
    public private(set) var recoveryNote: String?

    public init(directory: DataDirectory, clock: Clock = .system) throws {
        try directory.prepare()
        do {
            database = try Self.openChecked(directory.statePath)
        } catch let error as SQLiteError where error.isCorruption {
            let aside = directory.statePath + ".damaged-\(Int(clock.now.timeIntervalSince1970))"
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.moveItem(atPath: directory.statePath + suffix, toPath: aside + suffix)
            }
            database = try Self.openChecked(directory.statePath)
            recoveryNote = "state database \(directory.statePath) was damaged (\(error.message)); moved it to \(aside) and started afresh"
        }
    }

    private static func openChecked(_ path: String) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        try database.execute("PRAGMA journal_mode=WAL")
        let check = try database.query("PRAGMA quick_check") { $0.text(0) ?? "" }
        guard check == ["ok"] else {
            throw SQLiteError(code: 11, message: check.prefix(3).joined(separator: "; "), sql: "PRAGMA quick_check", path: path)
        }
        try migrate(database)
        return database
    }

    /// Each migration runs once, in order, tracked by `PRAGMA user_version`.
    private static let migrations: [String] = [
        """
        CREATE TABLE gate (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            pending_version TEXT, first_seen REAL, prompts_shown INTEGER NOT NULL DEFAULT 0,
            latest_clock REAL, last_release TEXT, last_lookup_at REAL,
            last_attempt_at REAL, last_lookup_error TEXT);
        INSERT INTO gate (id) VALUES (1);
        """,
        """
        CREATE TABLE regions (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, format TEXT NOT NULL,
            sha256 TEXT NOT NULL, size INTEGER NOT NULL, installed_at REAL NOT NULL,
            minzoom INTEGER, maxzoom INTEGER, bounds TEXT, source_url TEXT);
        """,
    ]

    private static func migrate(_ database: SQLiteDatabase) throws {
        try database.transaction(.immediate) {
            let current = try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
            for (index, sql) in migrations.enumerated() where index >= current {
                try database.execute(sql)
            }
            if current < migrations.count {
                try database.execute("PRAGMA user_version = \(migrations.count)")
            }
        }
    }
}
