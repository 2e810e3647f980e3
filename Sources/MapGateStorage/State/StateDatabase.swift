import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// One state database (`state.sqlite`, SQLite in rollback-journal mode): a copy of the gate's record, and in
/// the data directory the installed regions too.
///
/// A damaged file is moved aside (`state.sqlite.damaged-<time>`) and a fresh one started; the
/// move is reported in ``recoveryNote`` and never crashes a run. The gate then treats that copy
/// as lost (see `GateStore`).
///
/// It knows tables, not what is kept in them: what a new database starts with is its opener's
/// ``Seed`` (the gate's sealed fresh record, `StateDatabase+GateRecord.swift`).
public final class StateDatabase {
    /// Writes what a new database starts with, in the transaction that makes it.
    public typealias Seed = @Sendable (SQLiteDatabase) throws -> Void

    public let database: SQLiteDatabase
    public let path: String
    /// How long its statements wait for another connection's lock.
    public private(set) var busyTimeout: Duration = .seconds(10)
    /// Set when a damaged database was moved aside while opening.
    public private(set) var recoveryNote: String?
    /// True when this open made the database (it held no schema): it then holds a fresh sealed
    /// gate record, written in the transaction that made it. A database that is not new but has
    /// no sealed record was emptied or made outside mapgate.
    public let isNew: Bool
    /// True when the file is read as it stood when opened (``reading(directory:busyTimeout:seed:)``
    /// without a `-wal`): SQLite then takes no locks and does not see later changes, so a reader
    /// that keeps looking (a server's region watcher) opens it again for each look.
    public private(set) var isImmutable = false

    /// The state database of a data directory (creating the directory's folders).
    public convenience init(directory: DataDirectory, clock: Clock = .system, busyTimeout: Double = 10, seed: Seed) throws {
        try directory.prepare()
        try self.init(path: directory.statePath, clock: clock, busyTimeout: busyTimeout, seed: seed)
    }

    /// The state database at `path`, creating its folder (mode 0700) when missing.
    public init(path: String, clock: Clock = .system, busyTimeout: Double = 10, seed: Seed) throws {
        self.path = path
        self.busyTimeout = .milliseconds(Int(busyTimeout * 1000))
        let folder = PathText.deletingLastComponent(path)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw GeneralFailure(L.localized("state folder %1$s: cannot create it: %2$s", "\(folder)", "\(FileManager.default.folderCreationReason(atPath: folder, error: error))"), kind: .io)
        }
        do {
            let created = try Self.createAtomically(path, seed: seed)
            try Self.requireRegularFile(path)
            let (opened, foundEmpty) = try Self.openChecked(path, busyTimeout: busyTimeout, seed: seed)
            (database, isNew) = (opened, created || foundEmpty)
        } catch let error as SQLiteError where error.isCorruption {
            // A name no damaged copy has taken yet (found by an attack: damaged twice within
            // one second of the clock, the second could not be moved aside, and every run failed).
            let stem = path + ".damaged-\(Int(clock.now.timeIntervalSince1970))"
            var aside = stem
            var attempt = 0
            while FileManager.default.fileExists(atPath: aside) {
                attempt += 1
                aside = stem + "-\(attempt)"
            }
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            (database, isNew) = try Self.openChecked(path, busyTimeout: busyTimeout, seed: seed)
            recoveryNote = L.localized("state database %1$s was damaged (%2$s); moved it to %3$s and started afresh", "\(path)", "\(error.message)", "\(aside)")
        }
    }

    private init(database: SQLiteDatabase, path: String, isImmutable: Bool = false) {
        self.database = database
        self.path = path
        self.isImmutable = isImmutable
        isNew = false
    }

    /// The data directory's state database, opened to read only: no schema change, no journal
    /// switch, nothing created (a mistyped `--data-dir` stays uncreated). Where even a read-only
    /// open of a WAL database cannot work — a full disk or a read-only folder cannot hold its
    /// `-shm` file — the main file is read as it stands (`immutable`). Without a file there are no
    /// regions: an empty database in memory stands in. A file from an older mapgate is upgraded
    /// first, which needs a write.
    public static func reading(directory: DataDirectory, busyTimeout: Double = 10, seed: Seed) throws -> StateDatabase {
        let path = directory.statePath
        guard FileManager.default.fileExists(atPath: path) else {
            let memory = try SQLiteDatabase(path: ":memory:", mode: .readWriteCreate)
            _ = try migrate(memory, seed: seed)
            return StateDatabase(database: memory, path: path)
        }
        try requireRegularFile(path)
        func open(_ mode: SQLiteDatabase.Mode) throws -> SQLiteDatabase? {
            let database = try SQLiteDatabase(path: path, mode: mode, busyTimeout: .milliseconds(Int(busyTimeout * 1000)))
            let version = try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
            return version >= migrations.count ? database : nil
        }
        do {
            return try readingOpen(path: path, directory: directory, busyTimeout: busyTimeout, seed: seed, open: open)
        } catch let error as SQLiteError where error.isUnfinishedChange {
            // A writer killed in the middle of a change left its journal (found by an attack on
            // system mode: a `serve` failed with SQLite's 776 after a session's command was
            // killed). A connection that may write undoes it, then this one reads; one that may
            // not must not read the file as it stands (it holds that writer's half-written pages).
            try rollBackUnfinishedChange(path, busyTimeout: busyTimeout, after: error)
            return try readingOpen(path: path, directory: directory, busyTimeout: busyTimeout, seed: seed, open: open)
        }
    }

    /// Undoes a change a killed writer left (its hot journal) with a connection that may write,
    /// which SQLite does when it first reads; throws `error`, said for the user, when this process
    /// may not write the file or its folder.
    private static func rollBackUnfinishedChange(_ path: String, busyTimeout: Double = 10, after error: SQLiteError) throws {
        let writer = try SQLiteDatabase(path: path, mode: .readWriteCreate, busyTimeout: .milliseconds(Int(busyTimeout * 1000)))
        do {
            _ = try writer.query("PRAGMA user_version") { $0.int(0) }
        } catch let again as SQLiteError where again.isUnfinishedChange || writer.isReadOnly {
            throw GeneralFailure(
                L.localized(
                    "%1$s holds a change a stopped mapgate did not finish, which only its owner can undo: run any mapgate command that changes it (such as sync) as the user that owns it (%2$s)",
                    path, error.errorDescription ?? "\(error.code)"), kind: .io)
        }
    }

    private static func readingOpen(
        path: String, directory: DataDirectory, busyTimeout: Double, seed: Seed, open: (SQLiteDatabase.Mode) throws -> SQLiteDatabase?
    ) throws -> StateDatabase {
        do {
            // A read-only connection to a WAL database makes its `-wal` and `-shm` files when
            // they are not there, and, read-only, cannot remove them: a reading command then left
            // them behind, and the next command needed to write (a full disk or a read-only
            // folder refused it). Without a `-wal` nothing is pending and no connection is open
            // (the last one to close removes it), so the file is read as it stands.
            // A file in rollback-journal mode (as mapgate keeps it) is read with locks like any reader.
            let mode: SQLiteDatabase.Mode = !isWAL(path) || FileManager.default.fileExists(atPath: path + "-wal") ? .readOnly : .immutable
            guard let database = try open(mode) else { return try StateDatabase(directory: directory, busyTimeout: busyTimeout, seed: seed) }
            return StateDatabase(database: database, path: path, isImmutable: mode == .immutable)
        } catch let error as SQLiteError where error.isWriteFailure && !error.isUnfinishedChange {
            guard let database = try open(.immutable) else { throw error }
            return StateDatabase(database: database, path: path, isImmutable: true)
        }
    }

    /// SQLite opens its file without `O_NONBLOCK`: a FIFO at `path` would keep every command
    /// waiting for a writer that never comes. Anything but a regular file (after links) is refused
    /// at once, naming what it is.
    private static func requireRegularFile(_ path: String) throws {
        if let reason = FileManager.default.notRegularFileReason(atPath: path) {
            throw RegularFileError(path: path, reason: reason, kind: .io)
        }
    }

    /// Makes a missing database whole under a temporary name (schema, seed, committed and closed)
    /// and only then links it into place: a database mapgate could not finish creating (a file
    /// system SQLite cannot use, a full disk, a kill) leaves nothing at `path`, never a file that
    /// exists without a sealed record, which would read as tampering (issue 40). Returns whether
    /// this call made it (false when it was there, or another process made it first).
    static func createAtomically(_ path: String, seed: Seed) throws -> Bool {
        guard access(path, F_OK) != 0, errno == ENOENT else { return false }
        let temporary = path + ".creating-\(getpid())"
        for suffix in ["", "-journal"] { unlink(temporary + suffix) }
        defer { for suffix in ["", "-journal"] { unlink(temporary + suffix) } }
        try makeDatabase(at: temporary, seed: seed)
        if link(temporary, path) == 0 {
            DurableFile.syncFolder(PathText.deletingLastComponent(path))
            return true
        }
        if errno == EEXIST { return false }
        // No hard links (FAT and some FUSE file systems): a rename, which is as atomic.
        guard rename(temporary, path) == 0 else {
            throw GeneralFailure(L.localized("cannot create %1$s: %2$s", "\(path)", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        return true
    }

    /// Writes a complete new database at `path`; the connection is closed when this returns.
    private static func makeDatabase(at path: String, seed: Seed) throws {
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        _ = try database.query("PRAGMA journal_mode=DELETE") { $0.text(0) }
        _ = try migrate(database, seed: seed)
    }

    /// Whether the database file's header says WAL mode (bytes 18 and 19 are 2), as an older
    /// mapgate left it. An unreadable or short file reads as not. Read through a connection
    /// (``SQLiteDatabase/isWALFile``) that reads nothing else, so nothing is created beside the
    /// file, and whose close leaves this process's locks on it alone: a descriptor of one's own,
    /// closed, dropped them (found looking into a CI failure: a server thread's change of the
    /// gate's record lost its locks, and another process rolled it back as a killed writer's).
    package static func isWAL(_ path: String) -> Bool {
        (try? SQLiteDatabase(path: path, mode: .readOnly, busyTimeout: .zero))?.isWALFile ?? false
    }

    private static func openChecked(_ path: String, busyTimeout: Double, seed: Seed) throws -> (SQLiteDatabase, Bool) {
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate, busyTimeout: .milliseconds(Int(busyTimeout * 1000)))
        // Rollback-journal mode: a committed change is in the file itself, never only in a `-wal`
        // that deleting would undo, and a reader holding the file cannot hold up a checkpoint
        // (docs/gate.md). A file an older mapgate left in WAL mode is switched back when no other
        // connection has it open; until then it stays in WAL mode and works as before.
        _ = try database.query("PRAGMA journal_mode=DELETE") { $0.text(0) }
        let check = try database.query("PRAGMA quick_check") { $0.text(0) ?? "" }
        guard check == ["ok"] else {
            throw SQLiteError(code: 11, message: check.prefix(3).joined(separator: "; "), sql: "PRAGMA quick_check", path: path)
        }
        let before = try migrate(database, seed: seed)
        return (database, before == 0)
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
        ALTER TABLE gate ADD COLUMN installed_regions TEXT;
        ALTER TABLE gate ADD COLUMN uses_since_lookup INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE gate ADD COLUMN last_use_reading REAL;
        ALTER TABLE gate ADD COLUMN catalog_serials TEXT;
        """,
        """
        ALTER TABLE regions ADD COLUMN file_modified INTEGER;
        ALTER TABLE regions ADD COLUMN file_inode INTEGER;
        """,
        """
        ALTER TABLE gate ADD COLUMN boot_id TEXT;
        ALTER TABLE gate ADD COLUMN boot_seconds REAL;
        """,
        """
        ALTER TABLE gate ADD COLUMN not_newer_since REAL;
        """,
        """
        ALTER TABLE gate ADD COLUMN reservations TEXT;
        ALTER TABLE gate ADD COLUMN strictest_rules TEXT;
        ALTER TABLE gate ADD COLUMN first_use_at REAL;
        """,
        """
        ALTER TABLE regions ADD COLUMN package_wal INTEGER;
        """,
        // Where the user's copy of the gate's record was when this copy was last written
        // (`GateStore`): a user's copy found new while it is still there was moved, not lost.
        """
        CREATE TABLE gate_home (id INTEGER PRIMARY KEY CHECK (id = 1), path TEXT NOT NULL);
        """,
        """
        ALTER TABLE gate ADD COLUMN counting_for TEXT;
        """,
        // The delta that gave a region's file (`InstalledRegion.deltaSHA256`).
        """
        ALTER TABLE regions ADD COLUMN delta_sha256 TEXT;
        """,
        // The servers' paid days (`GateRecord.servingDays`), beside the gate's row under a seal of
        // their own, so that the row seals as a mapgate from before them reads it.
        servingDaysTable,
        // The last delivered uses' reservations (`GateRecord.recentDeliveries`), likewise.
        deliveriesTable,
        // The digest of a region's metadata when its file's SHA-256 is not taken
        // (`InstalledRegion.metadataSHA256`).
        """
        ALTER TABLE regions ADD COLUMN metadata_sha256 TEXT;
        """,
    ]

    /// The table of the servers' paid days, made by the migrations and again by a save that finds
    /// it gone (dropped by hand).
    package static let servingDaysTable = """
        CREATE TABLE IF NOT EXISTS serving_days (
            id INTEGER PRIMARY KEY CHECK (id = 1), days TEXT NOT NULL, generation INTEGER NOT NULL, seal TEXT NOT NULL);
        """

    /// The table of the last delivered uses (`GateRecord.recentDeliveries`), made by the
    /// migrations and again by a save that finds it gone.
    package static let deliveriesTable = """
        CREATE TABLE IF NOT EXISTS gate_deliveries (
            id INTEGER PRIMARY KEY CHECK (id = 1), reservations TEXT NOT NULL, generation INTEGER NOT NULL, seal TEXT NOT NULL);
        """

    /// Brings the schema up to date; returns the version it found.
    /// A database already current is only read: no write transaction, which a reader holding the
    /// file would hold up.
    private static func migrate(_ database: SQLiteDatabase, seed: Seed) throws -> Int {
        let found = try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
        if found >= migrations.count { return found }
        return try database.transaction(.immediate) {
            let current = try database.query("PRAGMA user_version") { $0.int(0) }.first ?? 0
            for (index, sql) in migrations.enumerated() where index >= current {
                try database.execute(sql)
            }
            if current < migrations.count {
                try database.execute("PRAGMA user_version = \(migrations.count)")
            }
            if current == 0 { try seed(database) }
            return current
        }
    }
}
