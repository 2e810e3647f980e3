import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage
import MapGateTrust

/// The installed regions: listing, opening for tiles (behind the gate), removing, verifying.
public final class RegionLibrary {
    public let directory: DataDirectory
    private let registry: RegionRegistry
    /// When set, the only regions this library has: each id only while its file's SHA-256 is the
    /// one given, checked each time the regions are listed (the demo serves its bundled region
    /// and nothing a user copies into its folder: issue 25).
    public let pins: [String: String]?

    /// What to do about a damaged installed region, said the same way by every command and the
    /// server: `sync` installs the same version again.
    public static func repairAdvice(for id: String) -> String { L.localized("'mapgate sync %1$s' installs it again", id) }

    /// The same for an installed region: one installed from a mirror is installed again from that
    /// mirror (found by an attack: an offline machine was told `mapgate sync ID`, which needs the
    /// publisher).
    public static func repairAdvice(for region: InstalledRegion) -> String {
        guard let mirror = region.mirrorSource else { return repairAdvice(for: region.id) }
        return L.localized("'%1$s' installs it again from the mirror it came from", ShellWord.command(["mapgate", "sync", "--from", mirror, region.id]))
    }

    public init(directory: DataDirectory, state: StateDatabase, pins: [String: String]? = nil) {
        self.directory = directory
        registry = RegionRegistry(state: state)
        self.pins = pins
    }

    public func installed() throws -> [InstalledRegion] {
        // One listing of the pending records (the server's watcher asks every second), not a
        // look per region.
        let pending = Set(PendingInstall.ids(in: directory))
        var all = try registry.all().map { pending.contains($0.id) ? completedInstall($0.id) ?? $0 : $0 }
        // A first install killed between its rename and its record.
        for id in pending where !all.contains(where: { $0.id == id }) {
            if let record = completedInstall(id) { all.append(record) }
        }
        all.sort { $0.id < $1.id }
        guard let pins else { return all }
        return all.filter { record in
            guard let pin = pins[record.id] else { return false }
            // A file that cannot be hashed is not the pinned one either.
            return (try? SHA256Hasher.hex(ofFileAt: directory.regionPath(record.id))) == pin
        }
    }

    /// The record of an installed region, or an error listing those that are installed (or, for
    /// one whose record is there but whose file is gone, saying so and how to get it back).
    public func region(_ id: String) throws -> InstalledRegion {
        guard let region = try record(id) else { throw try notInstalled(id) }
        let path = directory.regionPath(id)
        guard FileManager.default.fileExists(atPath: path) else {
            throw RegionError(
                region: id, reason: L.localized("is installed but its file %1$s is missing; %2$s", "\(path)", "\(Self.repairAdvice(for: region))"), kind: .io)
        }
        return region
    }

    /// The installed region the user's words name (``RegionArgument``): its id however typed, or
    /// the name of one installed region; else the words as typed, which the region's own errors
    /// then say are not installed. Throws when the name is that of several installed regions.
    public func regionID(typed: String) throws -> String {
        let argument = RegionArgument(typed)
        guard RegionArgument.problem(typed) == nil else { return typed }
        // The row alone: a pending record's check would hash the whole file (a first install's
        // pending record is among `installed()` below, and its id comes back from there).
        if let id = argument.exactID, (try? registry.hasRow(id)) == true { return id }
        // Names are looked up among the records that can be read: another region's damaged row
        // does not stop a command about this one (the words as typed then meet the region's own
        // errors, which say the damage).
        let regions = (try? installed()) ?? []
        return try argument.id(among: regions.map { (id: $0.id, name: $0.name) }) ?? typed
    }

    /// Whether `id` has a record, damaged or not (or an install's pending record).
    public func hasRecord(_ id: String) throws -> Bool {
        try PendingInstall.completed(id, in: directory) != nil || registry.hasRow(id)
    }

    /// The record of an installed region as it stands: a completed install's pending record, else
    /// the registry's; nil when it is not installed.
    private func record(_ id: String) throws -> InstalledRegion? {
        try completedInstall(id) ?? registry.region(id)
    }

    /// The record of an install whose rename happened without its record (``PendingInstall``):
    /// the file is that version. Nil when there is no such install.
    private func completedInstall(_ id: String) -> InstalledRegion? {
        guard var record = PendingInstall.completed(id, in: directory) else { return nil }
        record.fileStamp = RegionFileStamp(path: directory.regionPath(id))
        return record
    }

    /// Saves the records of installs a killed run left pending (their files are in place), and
    /// forgets those whose rename never happened: what the next writer does first. With
    /// `finishing`, each of the latter is shown to it first, and it may put its file in place
    /// (``RegionInstaller/finishPaidInstall(_:paid:catalog:)``: a run killed between its use's
    /// delivery and the rename).
    public func finishPendingInstalls(lock: DirectoryLock) throws {
        try finishPendingInstalls(lock: lock) { _ in }
    }

    func finishPendingInstalls(lock: DirectoryLock, finishing: (PendingInstall.Entry) -> Void) throws {
        for id in PendingInstall.ids(in: directory) {
            if completedInstall(id) == nil, let entry = PendingInstall.entry(id, in: directory) { finishing(entry) }
            if let record = completedInstall(id) { try registry.database.transaction { try registry.save(record) } }
            PendingInstall.remove(id, in: directory)
        }
        keepDeltasOfFinishedInstalls()
    }

    /// The uses the pending records name as paying for their installs (``PendingInstall/Entry/paidBy``),
    /// which ``finishPendingInstalls(lock:finishing:)`` finishes or gives up: each is to pay for
    /// nothing more (``Gate/retireDeliveries(_:)``).
    func pendingPayers(lock: DirectoryLock) -> Set<String> {
        Set(PendingInstall.ids(in: directory).compactMap { PendingInstall.entry($0, in: directory)?.paidBy })
    }

    /// A delta that installed its region, left in `partial/` by a run killed before it was kept
    /// for mirrors (found by an attack: the next `sync` deleted it, and every `mirror` then
    /// failed for want of it): kept now, when its bytes are the ones the record names.
    private func keepDeltasOfFinishedInstalls() {
        for record in (try? registry.all()) ?? [] {
            guard let sha256 = record.deltaSHA256, sha256.isSHA256Hex,
                !LeftoverFiles.keptDeltas(of: record.id, in: directory).contains(where: { $0.sha256 == sha256 })
            else { continue }
            let raw = directory.downloadPath(record.id, sha256: sha256)
            guard FileManager.default.notRegularFileReason(atPath: raw) == nil, (try? SHA256Hasher.hex(ofFileAt: raw)) == sha256 else { continue }
            LeftoverFiles.keepDelta(raw, id: record.id, sha256: sha256, in: directory)
        }
    }

    private func notInstalled(_ id: String) throws -> RegionError {
        let names = try installed().map(\.id)
        let listing =
            names.isEmpty
            ? L.localized("no region is installed; see 'mapgate catalog' and 'mapgate sync REGION'")
            : L.localized("installed: %1$s", names.joined(separator: L.localized(", ")))
        return RegionError(region: id, reason: L.localized("not installed (%1$s)", "\(listing)"), kind: .failure)
    }

    /// Opens an installed region's tiles. Takes the gate's authorization: no tiles without it, and
    /// none of a region that `sync` did not install under the gate's record (one copied in), nor
    /// of a file that is not the one installed (swapped by hand: `list` calls it damaged too).
    public func open(_ id: String, authorization: GateAuthorization) throws -> MBTilesFile {
        guard authorization.report.record.installedRegions.contains(id) else {
            _ = try region(id)
            throw RegionError(region: id, reason: L.localized("was not installed by 'mapgate sync' under this update gate's state; sync it again"), kind: .failure)
        }
        return try MBTilesFile(path: try requireIntact(id).path)
    }

    /// The installed region `id` and its file's path, when the file is as installed (its size and
    /// stamp; hashed only when the stamp changed): else the error `open` throws. Commands call it
    /// before the gate too, so that a damaged region is said before the update question is asked
    /// (found by an attack: the question came first, then the error).
    @discardableResult
    public func requireIntact(_ id: String) throws -> (record: InstalledRegion, path: String) {
        let record = try region(id)
        let path = directory.regionPath(id)
        if case .damaged(let reason) = try condition(of: record) {
            throw RegionError(region: id, reason: L.localized("is damaged: %1$s; %2$s", "\(reason)", "\(Self.repairAdvice(for: record))"), kind: .badData)
        }
        return (record, path)
    }

    /// What became of an installed region's file (its size, its stamp, and its SHA-256 only when
    /// the stamp changed: ``InstalledRegion/condition(ofFileAt:readingFrom:hashingUnstamped:)``),
    /// a new stamp on the installed bytes recorded (``recordStamp(_:of:)``).
    public func condition(of record: InstalledRegion) throws -> InstalledRegion.Condition {
        let condition = try record.condition(ofFileAt: directory.regionPath(record.id), hashingUnstamped: false)
        if case .intactWithNewStamp(let stamp) = condition { recordStamp(stamp, of: record) }
        return condition
    }

    /// Removes a region's file, its record and its partial downloads. Needs the data-directory lock.
    ///
    /// The file goes first, the record last: a run killed in between leaves a record whose file
    /// is missing (which `remove` finishes, and `sync` reinstalls), never a file no record
    /// names. A file no record names (left by an older mapgate killed in the middle) is removed
    /// as well, instead of "not installed". So is the partial download of a region never installed
    /// (a first `sync` stopped: "what was downloaded is kept"), which nothing else would free
    /// (found by an attack on sync over a poor network: `remove` said "not installed", and the
    /// 24 MB stayed on a small disk).
    public func remove(_ id: String, lock: DirectoryLock) throws -> Removal {
        // A name that is not a region id names no file: only its row goes, if a change outside
        // mapgate put one there (found by an attack: `remove ../../../victim` deleted
        // `victim.mbtiles` beside the data directory, with or without such a row).
        guard Catalog.isValidRegionID(id) else {
            guard try registry.hasRow(id) else { throw try notInstalled(id) }
            try registry.database.transaction { try registry.delete(id) }
            return .region(nil)
        }
        let path = directory.regionPath(id)
        // A row damaged outside mapgate is removed all the same (nil: there was no good record).
        let record: InstalledRegion?
        do {
            guard let found = try registry.region(id) else {
                guard FileManager.default.fileExists(atPath: path) else {
                    let downloads = LeftoverFiles.downloads(of: id, in: directory)
                    guard !downloads.isEmpty else { throw try notInstalled(id) }
                    // Each removed or said not to be (found by an attack: a partial folder the
                    // user could not write was "removed", its bytes still there).
                    var bytes: Int64 = 0
                    for download in downloads {
                        let size = FileManager.default.sizeOfItem(atPath: download)
                        do {
                            try FileManager.default.removeItem(atPath: download)
                        } catch {
                            throw RegionError(region: id, reason: L.localized("cannot delete %1$s: %2$s", "\(download)", "\(errorMessage(error))"), kind: .io)
                        }
                        bytes += size
                    }
                    try removeFiles(of: id, at: path)
                    return .download(bytes: bytes)
                }
                try removeFiles(of: id, at: path)
                return .region(nil)
            }
            record = found
        } catch let error as RegionError where error.kind == .badData {
            record = nil
        }
        try removeFiles(of: id, at: path)
        try registry.database.transaction { try registry.delete(id) }
        return .region(record)
    }

    /// What ``remove(_:lock:)`` removed.
    public enum Removal: Equatable, Sendable {
        /// The region's file and record; nil when the record was damaged (or there was none).
        case region(InstalledRegion?)
        /// Only the partial download, of these many bytes, of a region that is not installed.
        case download(bytes: Int64)
    }

    /// Removes a region's file and what runs left of it.
    private func removeFiles(of id: String, at path: String) throws {
        // `<id>.<hash>.part` (+ `.json`), `<id>.installing.mbtiles`, `<id>.patching.mbtiles`; not
        // those of a region whose id only starts with this one and a dot (`a` and `a.b`).
        LeftoverFiles.removeDeadRunFiles(of: id, in: directory, includingDownloads: true)
        LeftoverFiles.removeKeptDeltas(of: id, in: directory)
        // The record of an install killed before its rename names a file removed just above
        // (found by an attack: it stayed until a later sync of the region).
        PendingInstall.remove(id, in: directory)
        // SQLite's side files of the region (a reader of a file in WAL mode makes them).
        LeftoverFiles.removeSideFiles(of: path)
        if FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw RegionError(region: id, reason: L.localized("cannot delete %1$s: %2$s", "\(path)", "\(errorMessage(error))"), kind: .io)
            }
            DurableFile.syncFolder(directory.regionsPath)
        }
    }

    public struct Verification: Sendable {
        public var region: InstalledRegion
        /// Nil when the region is intact; otherwise what is wrong.
        public var problem: String?
        /// The file's bytes are not the ones installed (its SHA-256 differs), whatever its stamp
        /// says: `verify` then has its stamp distrusted (``distrustStamp(of:)``).
        public var bytesDiffer = false
        /// The file could not be read (no permission, an I/O error from the disk): nothing is
        /// known about its bytes, and installing it again would not help (found by an attack: a
        /// failing drive's EIO was reported as a damaged region, with the advice to sync it).
        public var isUnreadable = false
        /// The bytes are the ones installed, but their tiles are not the `contentHash` recorded,
        /// which was the catalog's word for a full package (not hashed at install): the
        /// publisher's package and catalog disagree, and installing it again would change nothing.
        public var tilesAreNotTheCatalogs = false
        /// The bytes are the ones installed, but their tiles are not the version's, and a delta
        /// made them (``InstalledRegion/deltaSHA256``): a tile the delta did not change was
        /// damaged before it (the delta's LtHash check sees only the tiles it changes). `verify`
        /// then has the region called damaged until it is installed again (``markTilesDamaged(of:timeout:)``).
        public var tilesDamaged = false
        public var isIntact: Bool { problem == nil }
    }

    /// Checks a region's file: present, same size and SHA-256 as recorded at install, SQLite's
    /// integrity check passes, and then its tiles hash to the recorded `contentHash` (for a full
    /// package that hash is the catalog's, taken at install without hashing the tiles). Nil when
    /// it is not installed (or was removed while it was checked).
    ///
    /// `verify` takes no lock, so a writer may be half-way when it looks: `remove` deletes the file
    /// before the record, `sync` renames a new file in before it saves the record. So a problem
    /// found is looked at again once no writer is at work (waiting up to `writerTimeout` seconds,
    /// `onWait` called if it must), with the record as it stands then, until it is found with no
    /// writer at work after the look and the record unchanged (three looks at most, `writerTimeout`
    /// for all of them): what is reported damaged is damaged, not caught in the middle of a change.
    public func verify(_ id: String, writerTimeout: Double = 30, onWait: () -> Void = {}) throws -> Verification? {
        guard let first = try record(id) else { return nil }
        var result = try check(first)
        var looks = 0
        var said = false
        let deadline = MonotonicClock.seconds + writerTimeout
        // Tiles that are not the catalog's hash, in the bytes the record names, are no writer's
        // half-way state: looked at once.
        while !result.isIntact, !result.tilesAreNotTheCatalogs, !result.tilesDamaged, looks < 3 {
            looks += 1
            DirectoryLock.waitForWriters(in: directory, timeout: max(0, deadline - MonotonicClock.seconds)) {
                if !said { onWait() }
                said = true
            }
            guard let now = try record(id) else { return nil }
            result = try check(now)
            if !DirectoryLock.isHeld(in: directory), try record(id) == now { break }
            if MonotonicClock.seconds >= deadline { break }
        }
        return result
    }

    /// A file whose bytes are not the ones installed though its stamp still is (rotten on the
    /// disk, or edited and its time set back) is taken as intact by `sync`, which looks at the
    /// stamp: the advice to sync it did nothing ("up to date"; found by an attack). Its stamp is
    /// replaced by one no file has (inode 0), so `sync`, `list` and `open` hash the file: `sync`
    /// finds it damaged and installs it again, and the others keep saying it is damaged.
    /// Only under the data directory's lock when no writer holds it, and only while the record
    /// is still the one checked; else left as it is. Needs a library on a writable state
    /// database (`verify` and `mirror` read through a read-only one, and open this one for it).
    public func distrustStamp(of checked: InstalledRegion) {
        // A few seconds' wait: another command recording a stamp holds the lock a moment (found by
        // an attack: `list` runs in a loop made `verify` skip the distrust, and `sync` then called
        // the rotten file up to date); a writer at work longer is left to finish.
        guard checked.fileStamp != nil, let lock = try? DirectoryLock(directory: directory, timeout: 5) else { return }
        distrustStamp(of: checked, lock: lock)
    }

    /// Has a region whose tiles `verify` found damaged under the file hash it recorded
    /// (``Verification/tilesDamaged``) called damaged from now on, by every look (`list`, `sync`,
    /// the server), until it is installed again: its SHA-256 is recorded as
    /// ``InstalledRegion/damagedTilesMark``, which no file has. Under the data directory's lock
    /// (waiting up to `timeout` seconds for a writer), only while the record is still the one
    /// checked (a new stamp of the same file recorded since is the same install: found by an
    /// attack, the check's own restamp made the mark skip). Returns whether it was recorded.
    public func markTilesDamaged(of checked: InstalledRegion, timeout: Double = 30) -> Bool {
        guard let lock = try? DirectoryLock(directory: directory, timeout: timeout) else { return false }
        return withExtendedLifetime(lock) {
            guard var now = try? registry.region(checked.id) else { return false }
            let stamp = now.fileStamp
            now.fileStamp = checked.fileStamp
            guard now == checked else { return false }
            now.fileStamp = stamp
            now.sha256 = InstalledRegion.damagedTilesMark
            return (try? registry.database.transaction { try registry.save(now) }) != nil
        }
    }

    /// The same, under the writers' lock the caller holds (`mirror`).
    public func distrustStamp(of checked: InstalledRegion, lock: DirectoryLock) {
        guard checked.fileStamp != nil else { return }
        withExtendedLifetime(lock) {
            guard let now = try? registry.region(checked.id), now == checked else { return }
            var distrusted = now
            distrusted.fileStamp = RegionFileStamp(size: now.size, modified: 0, inode: 0)
            try? registry.database.transaction { try registry.save(distrusted) }
        }
    }

    /// A file whose stamp changed but whose bytes are the ones installed (its SHA-256: restored
    /// from a backup, copied to another disk, `cp -a` of the data directory) has its new stamp
    /// recorded, so that the next look does not hash it again: `list`, `tile`, `open` and `serve`
    /// hashed every such region on every run until a `sync` reached its catalog, which for a user
    /// without a network may be never. Best effort, as ``distrustStamp(of:)``: under the data
    /// directory's lock when no writer holds it, only while the record is still the one checked,
    /// and through a state database opened for writing here (this library's may be read-only);
    /// else nothing is saved, and the next look hashes the file again. Not for the demo's
    /// pinned library.
    public func recordStamp(_ stamp: RegionFileStamp, of checked: InstalledRegion) {
        guard pins == nil, checked.fileStamp != stamp, FileManager.default.fileExists(atPath: directory.statePath),
            let lock = try? DirectoryLock(directory: directory, timeout: 0)
        else { return }
        withExtendedLifetime(lock) {
            guard let state = try? StateDatabase(directory: directory) else { return }
            let writable = RegionRegistry(state: state)
            guard let now = try? writable.region(checked.id), now == checked else { return }
            var stamped = now
            stamped.fileStamp = stamp
            try? writable.database.transaction { try writable.save(stamped) }
        }
    }

    private func check(_ record: InstalledRegion) throws -> Verification {
        let path = directory.regionPath(record.id)
        // Only a file that is not there is "missing": one mapgate may not look at (EACCES on its
        // folder, an I/O error) says why (issue 43: a quiet `try?` reported it as missing).
        var info = stat()
        guard stat(path, &info) == 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            return Verification(
                region: record,
                problem: missing
                    ? L.localized("the file %1$s is missing", "\(path)")
                    : L.localized("the file %1$s cannot be read: %2$s", "\(path)", SystemErrorReason.text(errno)),
                isUnreadable: !missing)
        }
        let size = Int64(info.st_size)
        guard size == record.size else {
            return Verification(region: record, problem: L.localized("size is %1$s bytes, %2$s were installed", "\(size)", "\(record.size)"))
        }
        if record.sha256 == InstalledRegion.damagedTilesMark { return Verification(region: record, problem: InstalledRegion.damagedTilesReason) }
        guard let installed = record.sha256 else { return try checkByContent(record, path: path) }
        // A file a writer deletes between the look above and these reads is a problem found, looked
        // at again by `verify` (found by an attack: "cannot read … to hash it", 74).
        do {
            // Hashed through one open file, whose stamp is the one recorded (``InstalledRegion/hash(_:)``).
            let (hash, stamp) = try InstalledRegion.hash(path)
            guard hash == installed else {
                return Verification(region: record, problem: L.localized("SHA-256 is %1$s, %2$s was installed", "\(hash)", "\(installed)"), bytesDiffer: true)
            }
            if let stamp, stamp != record.fileStamp { recordStamp(stamp, of: record) }
            try MBTilesFile(path: path).checkIntegrity()
            // Only once the bytes are the ones installed (a damaged file is not hashed: found by
            // an attack, its hash left running on another thread took the time of the next
            // region's, which ran out and was said ok). A hash that cannot be computed (its time
            // limit on a loaded machine) is said as that: never "ok".
            guard let recorded = record.contentHash else { return Verification(region: record, problem: nil) }
            let computed: TilesetHash
            do {
                computed = try TilesetHash.compute(ofFileAt: path)
            } catch {
                return Verification(
                    region: record, problem: L.localized("its tiles could not be hashed: %1$s", errorMessage(error)), isUnreadable: true)
            }
            // Hashed by its path: a file renamed in by a writer since its SHA-256 was taken
            // (`sync`) is no verdict on either file, but a change to look at again (found by an
            // attack: a good region was called damaged while a delta sync ran).
            if computed.hex != recorded.uppercased(), stamp == nil || RegionFileStamp(path: path) != stamp {
                return Verification(region: record, problem: L.localized("the file %1$s changed while it was checked", path))
            }
            if computed.hex != recorded.uppercased(), record.deltaSHA256 != nil {
                // Updated by a delta: its file hash is the result's, which kept whatever was
                // damaged in the tiles the delta did not change (found by an attack: a tile rotted
                // under an unchanged stamp was blamed on the publisher, and never repaired).
                return Verification(
                    region: record,
                    problem: L.localized(
                        "its tiles hash to %1$s, not the %2$s of its version: it was updated by a delta, and a tile the delta did not change was damaged before it (the delta's check sees only the tiles it changes)",
                        computed.hex, recorded),
                    tilesDamaged: true)
            }
            if computed.hex != recorded.uppercased() {
                return Verification(
                    region: record,
                    problem: L.localized(
                        "its tiles hash to %1$s, not the %2$s its catalog declared (contentHash) when it was installed: the publisher's package and catalog disagree, and installing it again would give the same tiles (tell the publisher)",
                        computed.hex, recorded),
                    tilesAreNotTheCatalogs: true)
            }
        } catch let error as MBTilesError {
            return Verification(region: record, problem: error.reason)
        } catch {
            return Verification(region: record, problem: L.localized("the file %1$s cannot be read: %2$s", "\(path)", errorMessage(error)), isUnreadable: true)
        }
        return Verification(region: record, problem: nil)
    }

    /// ``check(_:)`` of a file whose SHA-256 was not taken (a delta's result): its pages, tiles
    /// and metadata against the record, through one open file (``InstalledRegion/contentCheck(ofFileAt:naming:)``).
    /// Other tiles are a tile damaged (marked, as for any region a delta updated); a damaged page,
    /// metadata or tiles no pass takes have the stamp distrusted, so that `sync` checks the file
    /// and installs it again (found by an attack: `verify` said damaged, or could not check it,
    /// and `sync` said up to date, for good).
    private func checkByContent(_ record: InstalledRegion, path: String) throws -> Verification {
        switch try record.contentCheck(ofFileAt: path) {
        case .intact(let stamp):
            if stamp != record.fileStamp { recordStamp(stamp, of: record) }
            return Verification(region: record, problem: nil)
        case .changedWhileChecked:
            return Verification(region: record, problem: L.localized("the file %1$s changed while it was checked", path))
        case .unreadable(let reason):
            return Verification(region: record, problem: reason, isUnreadable: true)
        case .tilesDiffer(let hex):
            return Verification(
                region: record,
                problem: L.localized(
                    "its tiles hash to %1$s, not the %2$s of its version: a tile of it was damaged (since it was updated by a delta, or before, in a tile the delta did not change)",
                    hex, record.contentHash ?? ""),
                tilesDamaged: true)
        case .damaged(let reason):
            return Verification(region: record, problem: reason, bytesDiffer: true)
        }
    }
}
