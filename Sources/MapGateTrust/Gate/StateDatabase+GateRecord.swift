import MapGateBase
import MapGateStorage

extension StateDatabase {
    /// What every state database starts with: a sealed fresh gate record, so that an empty or
    /// unsealed row is never a new database's (it was emptied or made by hand).
    public static let freshGateRecord: Seed = { try GateRecord().save(to: $0) }

    /// The state database of a data directory (creating the directory's folders), seeded with
    /// ``freshGateRecord`` when new.
    public convenience init(directory: DataDirectory, clock: Clock = .system, busyTimeout: Double = 10) throws {
        try self.init(directory: directory, clock: clock, busyTimeout: busyTimeout, seed: Self.freshGateRecord)
    }

    /// The state database at `path`, seeded with ``freshGateRecord`` when new.
    public convenience init(path: String, clock: Clock = .system, busyTimeout: Double = 10) throws {
        try self.init(path: path, clock: clock, busyTimeout: busyTimeout, seed: Self.freshGateRecord)
    }

    /// The data directory's state database, read only (see ``reading(directory:busyTimeout:seed:)``).
    public static func reading(directory: DataDirectory, busyTimeout: Double = 10) throws -> StateDatabase {
        try reading(directory: directory, busyTimeout: busyTimeout, seed: freshGateRecord)
    }
}
