import Foundation

/// The gate's record, kept in several state databases at once: the user's state folder
/// (`$XDG_STATE_HOME/mapgate/state.sqlite`) and the data directory's `state.sqlite`.
///
/// Every change goes to every copy inside one `BEGIN IMMEDIATE` per copy (always taken in the
/// same order, so two processes never deadlock), with a generation that only grows and a seal
/// over the fields. On load the sealed copy of the highest generation wins; of equal ones the more
/// restrictive. A copy that is missing, damaged or tampered with is reported and rewritten.
/// When no copy can be read while map data is installed, the record starts *recovering*: it fails
/// closed until a lookup succeeds (see ``GatePolicy/record(_:trustedTime:at:into:)``).
public final class GateStore {
    private let copies: [StateDatabase]
    private let regionsFolder: String?
    /// What the loads so far found wrong with the copies, for the user to see; empty when they
    /// agreed. (The first change rewrites every copy, so later loads find nothing new.)
    public private(set) var notes: [String] = []

    /// - Parameters:
    ///   - copies: the state databases holding a copy of the record, in lock order.
    ///   - regionsFolder: the data directory's `regions/`: a region file there means map data was
    ///     installed, so lost state must fail closed.
    public init(copies: [StateDatabase], regionsFolder: String?) {
        var seen = Set<String>()
        // The same file under two names (a symlinked folder) is one copy: locking it twice would deadlock.
        self.copies = copies.filter { seen.insert(URL(fileURLWithPath: $0.path).resolvingSymlinksInPath().path).inserted }
        self.regionsFolder = regionsFolder
    }

    /// The usual store: the copy in the user's state folder and the one in the data directory.
    ///
    /// - Parameter busyTimeout: how long to wait for another process's write lock.
    public convenience init(stateFolder: String, directory: DataDirectory, clock: Clock = .system, busyTimeout: Double = 10) throws {
        let home = try StateDatabase(path: stateFolder + "/state.sqlite", clock: clock, busyTimeout: busyTimeout)
        let data = try StateDatabase(directory: directory, clock: clock, busyTimeout: busyTimeout)
        self.init(copies: [home, data], regionsFolder: directory.regionsPath)
    }

    /// Runs `body` on the record in a write transaction on every copy, then saves it to all of them
    /// with the next generation.
    func update<T>(_ body: (inout GateRecord) throws -> T) throws -> T {
        try locked(0) {
            var record = try load()
            let result = try body(&record)
            record.generation += 1
            for copy in copies { try record.save(to: copy.database) }
            return result
        }
    }

    private func locked<T>(_ index: Int, _ body: () throws -> T) throws -> T {
        guard index < copies.count else { return try body() }
        return try copies[index].database.transaction(.immediate) { try locked(index + 1, body) }
    }

    /// Reads every copy and picks the one that decides. Runs inside the transactions.
    private func load() throws -> GateRecord {
        var notes: [String] = []
        var best: GateRecord?
        var lost = false
        var generations = Set<Int64>()
        for copy in copies {
            if let note = copy.recoveryNote { notes.append(note) }
            let loaded = try GateRecord.load(from: copy.database, acceptingUnsealed: copy.upgradedFromUnsealed)
            let record: GateRecord
            switch loaded {
            case .sealed(let sealed), .legacy(let sealed):
                record = sealed
            case .missing:
                if copy.recoveryNote != nil { lost = true }
                notes.append("gate state copy \(copy.path) was missing; restoring it")
                continue
            case .tampered:
                lost = true
                notes.append("gate state copy \(copy.path) was changed outside mapgate (its seal does not match); ignoring it")
                continue
            }
            generations.insert(record.generation)
            if let current = best {
                if record.generation > current.generation
                    || (record.generation == current.generation && record.isMoreRestrictive(than: current))
                {
                    best = record
                }
                // The clock's high-water mark never goes down, whichever copy wins.
                let latest = max(current.latestClock ?? .distantPast, record.latestClock ?? .distantPast)
                best?.latestClock = latest == .distantPast ? nil : latest
            } else {
                best = record
            }
        }
        if generations.count > 1 { notes.append("gate state copies disagreed (generations \(generations.sorted().map(String.init).joined(separator: ", "))); the newest wins") }
        if let best {
            remember(notes)
            return best
        }
        // No copy could be read. A new user starts afresh; installed map data fails closed.
        var fresh = GateRecord()
        if lost || hasInstalledRegions {
            fresh.isRecovering = true
            notes.append("no readable gate state while map data is installed: mapgate needs one successful store lookup before the next use")
        } else {
            notes.removeAll { $0.contains("was missing") }  // a new user: nothing was lost
        }
        remember(notes)
        return fresh
    }

    private func remember(_ found: [String]) {
        for note in found where !notes.contains(note) { notes.append(note) }
    }

    private var hasInstalledRegions: Bool {
        guard let regionsFolder, let names = try? FileManager.default.contentsOfDirectory(atPath: regionsFolder) else { return false }
        return names.contains { $0.hasSuffix(".mbtiles") }
    }
}
