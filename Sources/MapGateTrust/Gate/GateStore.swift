import CSQLite
import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage

/// The gate's record, kept in several state databases at once: the user's state folder
/// (`$XDG_STATE_HOME/mapgate/state.sqlite`) and the data directory's `state.sqlite`.
///
/// Every change goes to every copy inside one `BEGIN IMMEDIATE` per copy (always taken in the
/// same order, so two processes never deadlock), with a generation that only grows and a seal
/// over the fields. On load the sealed copy of the highest generation wins; of equal ones the more
/// restrictive. Lost state (see ``load()``) is reported once and makes the record *recover*: it
/// fails closed until a lookup succeeds (see ``GatePolicy/record(_:trustedTime:at:into:)``).
public final class GateStore {
    private var copies: [StateDatabase]
    /// Copies that exist but cannot be written (a read-only or full data directory): read and
    /// compared on every load, never written. An old copy brought back elsewhere still loses to them.
    /// A data directory's copy that opened but then could not be written joins them.
    private var readOnlyCopies: [StateDatabase]
    /// Copies that exist but cannot even be read, with the reason: the record recovers (fails
    /// closed until a lookup), since what they hold cannot be compared.
    private let unreadableCopies: [(path: String, reason: String)]
    private let regionsFolder: String?
    /// What the loads so far found wrong with the copies, for the user to see; empty when they
    /// agreed. (The first change rewrites every copy, so later loads find nothing new.)
    public private(set) var notes: [String] = []
    /// Opens the same copies again, for a thread of its own (a store is confined to the thread
    /// that opened it); nil for a store made of given copies.
    let reopen: (@Sendable () throws -> GateStore)?

    /// - Parameters:
    ///   - copies: the state databases holding a copy of the record, in lock order.
    ///   - regionsFolder: the data directory's `regions/`: a region file there means map data was
    ///     installed, so lost state must fail closed.
    ///   - readOnlyCopies: copies to read and compare but never write.
    ///   - unreadableCopies: copies that exist but cannot be read (path and reason).
    ///   - reopen: opens the same copies again (``reopen``).
    public init(
        copies: [StateDatabase], readOnlyCopies: [StateDatabase] = [], unreadableCopies: [(path: String, reason: String)] = [],
        regionsFolder: String?, reopen: (@Sendable () throws -> GateStore)? = nil
    ) {
        self.reopen = reopen
        var seen = Set<String>()
        // The same file under two names (a symlinked folder) is one copy: locking it twice would deadlock.
        self.copies = copies.filter { seen.insert(URL(fileURLWithPath: $0.path).resolvingSymlinksInPath().path).inserted }
        self.readOnlyCopies = readOnlyCopies.filter { seen.insert(URL(fileURLWithPath: $0.path).resolvingSymlinksInPath().path).inserted }
        self.unreadableCopies = unreadableCopies
        self.regionsFolder = regionsFolder
    }

    /// The usual store: the copy in the user's state folder and the one in the data directory.
    ///
    /// - Parameter busyTimeout: how long to wait for another process's write lock.
    /// - Parameter createsDataDirectory: false for a command that only looks at the gate
    ///   (`status`, `check`, `catalog`): a data directory that does not exist is not made for the
    ///   gate's copy (found by an attack: `status --data-dir typo` left `typo/` behind); without it
    ///   there is no map data, and the state folder's copy alone decides.
    public convenience init(
        stateFolder: String, directory: DataDirectory, clock: Clock = .system, busyTimeout: Double = 10, createsDataDirectory: Bool = true
    ) throws {
        let home = try StateDatabase(path: stateFolder + "/state.sqlite", clock: clock, busyTimeout: busyTimeout)
        // The data directory's copy only follows the user's: on a full disk or a read-only data
        // directory it cannot be written, but it is still read and compared (a lower generation
        // brought back into the state folder loses to it); one that cannot be read fails closed.
        var copies = [home]
        var readOnly: [StateDatabase] = []
        var unreadable: [(path: String, reason: String)] = []
        do {
            guard createsDataDirectory || FileManager.default.fileExists(atPath: directory.path) else { throw DataDirectoryAbsent() }
            let data = try StateDatabase(directory: directory, clock: clock, busyTimeout: busyTimeout)
            // Two copies that are one file (the data directory inside the state folder, a linked
            // file or folder) are one copy: putting back a saved copy of it would reopen a closed
            // gate, which two copies prevent (found by an attack). Refused, naming both.
            if Self.isSameFile(home.path, data.path) {
                throw GeneralFailure(
                    L.localized(
                        "the gate's state %1$s and the data directory's copy %2$s are one file (XDG_STATE_HOME and the data directory name one folder, or a link joins them): the gate keeps two copies to compare; set XDG_STATE_HOME to another folder and copy this state.sqlite into its mapgate folder, or choose another --data-dir",
                        home.path, data.path), kind: .usage)
            }
            // SQLite falls back to read-only without an error (a `-wal` left by a crashed writer
            // in a folder that is now read-only): read and compared like one that failed to open.
            if data.database.isReadOnly { readOnly.append(data) } else { copies.append(data) }
        } catch is DataDirectoryAbsent {
        } catch let error as SQLiteError where error.isWriteFailure && FileManager.default.fileExists(atPath: directory.statePath) {
            do {
                readOnly.append(try StateDatabase.reading(directory: directory, busyTimeout: busyTimeout))
            } catch {
                unreadable.append((directory.statePath, errorMessage(error)))
            }
        }
        self.init(
            copies: copies, readOnlyCopies: readOnly, unreadableCopies: unreadable, regionsFolder: directory.regionsPath,
            reopen: { try GateStore(stateFolder: stateFolder, directory: directory, clock: clock, busyTimeout: busyTimeout) })
    }

    /// Whether both paths (after links) name one file: the same device and inode.
    static func isSameFile(_ a: String, _ b: String) -> Bool {
        guard let first = FileIdentity(path: a), let second = FileIdentity(path: b) else { return false }
        return first.device == second.device && first.inode == second.inode
    }

    /// Runs `body` on the record in a write transaction on every copy, then saves it to all of them
    /// with the next generation.
    ///
    /// - Parameter deadline: the change is saved before then (``MonotonicClock/seconds``) or not at
    ///   all (``GateDeliveryLateError``): every wait for another process's lock ends by then, and
    ///   once `body` has run with the lock had, a deadline passed meanwhile rolls the change back.
    func update<T>(before deadline: Double? = nil, _ body: (inout GateRecord) throws -> T) throws -> T {
        while true {
            do {
                return try updateAll(before: deadline, body)
            } catch let error as GateStateError where deadline.map({ MonotonicClock.seconds >= $0 }) == true && error.isBusy {
                throw GateDeliveryLateError()
            } catch let error as GateStateError {
                // A data directory's copy that cannot be written (its folder read-only, its disk
                // full: the rollback journal cannot be made) is read and compared from now on,
                // never written, and the change is made on the others; the user's own copy
                // cannot be skipped: the gate then fails closed.
                guard error.isWriteFailure, let index = copies.firstIndex(where: { $0.path == error.path }), index > 0 else { throw error }
                readOnlyCopies.append(copies.remove(at: index))
            }
        }
    }

    private func updateAll<T>(before deadline: Double?, _ body: (inout GateRecord) throws -> T) throws -> T {
        var writing = copies.first?.path ?? "?"
        do {
            defer { for copy in copies { copy.database.setBusyTimeout(copy.busyTimeout) } }
            if let deadline {
                for copy in copies { copy.database.setBusyTimeout(Self.patience(copy.busyTimeout, until: deadline)) }
            }
            let result = try locked(0) {
                var record = try load()
                let result = try body(&record)
                if let deadline, MonotonicClock.seconds >= deadline { throw GateDeliveryLateError() }
                record.generation += 1
                // A record that `load` would take for tampered is never written (rolled back, so
                // nothing is counted): saved, it would cost the user the record at the next run.
                guard record.isPlausible else { throw Self.implausibleChange }
                for (index, copy) in copies.enumerated() {
                    writing = copy.path
                    try record.save(to: copy.database)
                    // Each other copy notes where the user's copy is (``formerHome(of:atLeast:)``).
                    if index > 0, let home = copies.first?.path {
                        try copy.database.execute("INSERT OR REPLACE INTO gate_home (id, path) VALUES (1, ?)", [.text(home)])
                    }
                    // The commit waits only for readers (another writer would hold the write lock
                    // this transaction holds): a process that keeps the file open in a read
                    // transaction (sqlite3, a backup tool) is waited for briefly, then the change
                    // is refused, not saved half-way.
                    copy.database.setBusyTimeout(deadline.map { Self.patience(Self.readerPatience, until: $0) } ?? Self.readerPatience)
                }
                return result
            }
            for copy in copies { Self.checkpoint(copy) }
            return result
        } catch let error as SQLiteError where error.isWriteFailure || error.primaryCode == SQLITE_BUSY {
            throw GateStateError(error, path: writing)
        }
    }

    static var implausibleChange: GeneralFailure {
        GeneralFailure(L.localized(
            "the update gate's state was left as it was: the change would hold a date before 1970 or a count out of range, which no saved record may hold (is this machine's clock right?); nothing was counted"))
    }

    /// How long a change of the record waits for a reader of a copy to finish.
    static let readerPatience: Duration = .seconds(2)

    /// `patience`, or less: what is left until `deadline` (``MonotonicClock/seconds``).
    private static func patience(_ patience: Duration, until deadline: Double) -> Duration {
        min(patience, .milliseconds(Int64(max(0, (deadline - MonotonicClock.seconds) * 1000))))
    }

    /// A copy still in WAL mode (an older mapgate's, held open by another process while it was
    /// to be switched to rollback-journal mode) has what was just committed moved into the file,
    /// without waiting for any reader: a checkpoint a reader holds up is finished by a later one.
    private static func checkpoint(_ copy: StateDatabase) {
        guard copy.database.isWALFile else { return }
        _ = try? copy.database.query("PRAGMA wal_checkpoint(PASSIVE)") { $0.int(0) }
    }

    private func locked<T>(_ index: Int, _ body: () throws -> T) throws -> T {
        guard index < copies.count else { return try body() }
        return try copies[index].database.transaction(.immediate) { try locked(index + 1, body) }
    }

    /// Reads every copy and picks the one that decides. Runs inside the transactions.
    ///
    /// The first copy (the user's state folder) is the one every data directory shares; the
    /// others follow it. State is *lost* — and the record recovers: it fails closed until a lookup
    /// succeeds — when the user's copy was damaged (a data directory's damaged copy is as a new one),
    /// when a copy that is not new holds no sealed record
    /// (emptied, made by hand, edited, or from before records were sealed), when the first copy
    /// is new while another holds a saved record (it was deleted or moved: the other may be an
    /// old copy brought back), and when nothing was ever saved while region files are installed.
    /// A new data directory's copy, or one of a lower generation, is normal and says nothing.
    private func load() throws -> GateRecord {
        var notes: [String] = []
        var best: GateRecord?
        var lost = false
        var latestClock: Date?
        for copy in unreadableCopies {
            lost = true
            notes.append(L.localized("gate state %1$s exists but cannot be read (%2$s); it cannot be compared with the others", "\(copy.path)", "\(copy.reason)"))
        }
        for copy in copies + readOnlyCopies {
            if let note = copy.recoveryNote {
                // A data directory's copy found damaged (moved aside, made afresh) is as a new
                // one: the user's copy holds the record, as when a data directory is new (found
                // by an attack: a damaged data directory's copy closed the gate on an honest user
                // with uses left). The user's copy found damaged is lost state: a data
                // directory's copy may be an old one (another `--data-dir`).
                if copy === copies.first { lost = true }
                notes.append(note)
            }
            let loaded: GateRecord.Loaded
            do {
                loaded = try GateRecord.load(from: copy.database)
            } catch let error as SQLiteError where error.primaryCode == SQLITE_ERROR {
                loaded = .tampered  // the gate table or a column was dropped
            }
            guard case .sealed(let record) = loaded else {
                lost = true
                notes.append(L.localized("gate state %1$s was changed outside mapgate (it holds no record sealed by this mapgate: emptied, edited or made by hand); ignoring it", "\(copy.path)"))
                continue
            }
            if let clock = record.latestClock { latestClock = max(latestClock ?? clock, clock) }
            if let current = best {
                if record.generation > current.generation
                    || (record.generation == current.generation && record.isMoreRestrictive(than: current))
                {
                    best = record
                }
            } else {
                best = record
            }
        }
        // Only the first load of a run sees the copies as they were found: the first change rewrites them all.
        if !hasLoaded, let primary = copies.first, primary.isNew, let saved = best, saved.generation > 0 {
            if let (path, former) = formerHome(of: primary, atLeast: saved.generation) {
                // The user's copy was not lost: another state folder was named for this run
                // (`XDG_STATE_HOME` set in a login shell's profile and not in a service's, or the
                // other way round), and the copy kept where it was before is still there, at
                // least as new as the data directory's (found by an attack: this run failed closed,
                // and with a newer version out a month the gate closed on an honest user). Its
                // record is read and compared; nothing was lost, and both folders are kept.
                if former.generation > saved.generation || (former.generation == saved.generation && former.isMoreRestrictive(than: saved)) {
                    best = former
                }
                if let clock = former.latestClock { latestClock = max(latestClock ?? clock, clock) }
                notes.append(
                    L.localized(
                        "gate state %1$s is new: the record was read from %2$s, where an earlier run kept it (XDG_STATE_HOME differs between runs?)", "\(primary.path)",
                        path))
            } else {
                lost = true
                notes.append(L.localized("gate state %1$s is new while another copy holds a saved record (it was deleted or moved)", "\(primary.path)"))
            }
        }
        var record = best ?? GateRecord()
        // The clock's high-water mark never goes down, whichever copy wins.
        record.latestClock = latestClock
        if !lost, record.generation == 0, hasInstalledRegions {
            lost = true
            notes.append(L.localized("region files are installed in %1$s but no gate state was ever saved", "\(regionsFolder ?? "?")"))
        }
        if lost, !record.isRecovering {
            record.isRecovering = true
            notes.append(L.localized("the update gate's state was lost or changed: mapgate needs one successful store lookup before the next use"))
        }
        hasLoaded = true
        remember(notes)
        return record
    }

    private var hasLoaded = false

    /// The record in the user's copy where the other copies say it was last kept, when that is
    /// not `primary`, is a regular file, and holds a sealed record of at least `generation` (one
    /// of a lower generation may be an old copy brought back: the record stays lost). Read only.
    private func formerHome(of primary: StateDatabase, atLeast generation: Int64) -> (path: String, record: GateRecord)? {
        let name = "/state.sqlite"
        let others = copies.dropFirst() + readOnlyCopies
        for copy in others {
            // Not one of the copies compared already (found by an attack: the data directory's own
            // copy, restored, named as its own proof).
            guard let path = (try? copy.database.query("SELECT path FROM gate_home WHERE id = 1") { $0.text(0) })?.first ?? nil,
                path != primary.path, path.hasSuffix(name), !Self.isSameFile(path, primary.path), !others.contains(where: { Self.isSameFile(path, $0.path) })
            else { continue }
            // A run in the usual folder commits the data directory's copy a moment before its own
            // (found by an attack: a run with the other folder that read in between saw the user's
            // copy a generation behind, about one try in a hundred): a lower generation is read
            // again for up to two seconds before it counts as an old copy brought back.
            let deadline = MonotonicClock.seconds + 2
            while true {
                // A missing file reads as a fresh record (generation 0); anything but a regular file is refused unopened.
                guard let former = try? StateDatabase.reading(directory: DataDirectory(path: String(path.dropLast(name.count)))),
                    case .sealed(let record)? = try? GateRecord.load(from: former.database)
                else { break }
                if record.generation >= generation { return (path, record) }
                guard MonotonicClock.seconds < deadline else { break }
                usleep(50_000)
            }
        }
        return nil
    }

    /// Adds a note for the user (said once per run).
    func note(_ text: String) { remember([text]) }

    private func remember(_ found: [String]) {
        for note in found where !notes.contains(note) { notes.append(note) }
    }

    /// Whether `regions/` holds a region file; a folder that exists but cannot be listed (say
    /// `chmod 0300`) counts as holding one: it fails closed.
    private var hasInstalledRegions: Bool {
        guard let regionsFolder else { return false }
        guard let folder = opendir(regionsFolder) else { return errno != ENOENT && errno != ENOTDIR }
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".mbtiles") { return true }
        }
        return false
    }
}

/// The data directory does not exist: the gate keeps its copy in the state folder only.
private struct DataDirectoryAbsent: Error {}
