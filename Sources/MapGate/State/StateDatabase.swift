import Foundation

/// One state database (`state.sqlite`, SQLite in WAL mode): a copy of the gate's record, and in
/// the data directory the installed regions too.
///
/// A damaged file is moved aside (`state.sqlite.damaged-<time>`) and a fresh one started; the
/// move is reported in ``recoveryNote`` and never crashes a run. The gate then treats that copy
/// as lost (see ``GateStore``).
public final class StateDatabase {
    public let database: SQLiteDatabase
    public let path: String
    /// Set when a damaged database was moved aside while opening.
    public private(set) var recoveryNote: String?
    /// True when this open upgraded a database written before gate records were sealed: its
    /// record is read once without a seal.
    let upgradedFromUnsealed: Bool

    /// The state database of a data directory (creating the directory's folders).
    public convenience init(directory: DataDirectory, clock: Clock = .system, busyTimeout: Double = 10) throws {
        try directory.prepare()
        try self.init(path: directory.statePath, clock: clock, busyTimeout: busyTimeout)
    }

    /// The state database at `path`, creating its folder (mode 0700) when missing.
    public init(path: String, clock: Clock = .system, busyTimeout: Double = 10) throws {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw GeneralFailure("state folder \(folder): cannot create it: \(error.localizedDescription)", kind: .io)
        }
        do {
            (database, upgradedFromUnsealed) = try Self.openChecked(path, busyTimeout: busyTimeout)
        } catch let error as SQLiteError where error.isCorruption {
            let aside = path + ".damaged-\(Int(clock.now.timeIntervalSince1970))"
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            (database, upgradedFromUnsealed) = try Self.openChecked(path, busyTimeout: busyTimeout)
            recoveryNote = "state database \(path) was damaged (\(error.message)); moved it to \(aside) and started afresh"
        }
    }

    private static func openChecked(_ path: String, busyTimeout: Double) throws -> (SQLiteDatabase, Bool) {
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate, busyTimeout: .milliseconds(Int(busyTimeout * 1000)))
        try database.execute("PRAGMA journal_mode=WAL")
        let check = try database.query("PRAGMA quick_check") { $0.text(0) ?? "" }
        guard check == ["ok"] else {
            throw SQLiteError(code: 11, message: check.prefix(3).joined(separator: "; "), sql: "PRAGMA quick_check", path: path)
        }
        let before = try migrate(database)
        return (database, before > 0 && before < sealedSchemaVersion)
    }

    /// The schema version from which gate records carry a seal.
    private static let sealedSchemaVersion = 3

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
        """
        ALTER TABLE gate ADD COLUMN recovering INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE gate ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE gate ADD COLUMN seal TEXT;
        """,
        """
        ALTER TABLE gate ADD COLUMN catalog_serial INTEGER;
        ALTER TABLE gate ADD COLUMN catalog_sha256 TEXT;
        ALTER TABLE gate ADD COLUMN publisher_gate TEXT;
        """,
        """
        ALTER TABLE regions ADD COLUMN content_hash TEXT;
        ALTER TABLE regions ADD COLUMN tile_count INTEGER;
        """,
        """
        ALTER TABLE regions ADD COLUMN file_modified INTEGER;
        ALTER TABLE regions ADD COLUMN file_inode INTEGER;
        """,
    ]

    /// Brings the schema up to date; returns the version it found.
    private static func migrate(_ database: SQLiteDatabase) throws -> Int {
        try database.transaction(.immediate) {
            let current = try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
            for (index, sql) in migrations.enumerated() where index >= current {
                try database.execute(sql)
            }
            if current < migrations.count {
                try database.execute("PRAGMA user_version = \(migrations.count)")
            }
            return current
        }
    }
}
