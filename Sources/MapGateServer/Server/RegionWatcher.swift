import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateWorkflows

/// Keeps a running server's regions current: once every `interval` it re-reads the regions
/// table and each file's identity (``TileService/refresh(from:)``), so a region installed,
/// updated (by rename, as `sync` does) or removed while serving is served, or 404, within it.
/// A failed look keeps the regions served and reaches `onEvent`; none is swallowed.
public final class RegionWatcher: Sendable {
    public enum Event: Sendable {
        case changed(TileService.Changes)
        case failed(String)
    }

    private let worker: PeriodicWorker

    /// - Parameter pins: the only regions to serve, by SHA-256 (``RegionLibrary/pins``).
    public init(
        service: TileService, directory: DataDirectory, pins: [String: String]? = nil, interval: Double = 1,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        worker = PeriodicWorker(name: "region-watcher", interval: interval) {
            let look = Look(service: service, directory: directory, pins: pins, onEvent: onEvent)
            return { look.run() }
        }
    }

    /// Throws when its thread cannot be started.
    public func start() throws { try worker.start() }

    public func stop() { worker.stop() }

    /// One look, and what it keeps between looks: made on the worker's thread when it starts,
    /// and not `Sendable`, so the compiler keeps it there.
    private final class Look {
        let service: TileService
        let directory: DataDirectory
        let onEvent: @Sendable (Event) -> Void
        /// The watcher's own read-only connection to the state database, opened on its thread.
        var library: RegionLibrary?
        var lastFailure: String?

        let pins: [String: String]?

        init(service: TileService, directory: DataDirectory, pins: [String: String]?, onEvent: @escaping @Sendable (Event) -> Void) {
            self.service = service
            self.directory = directory
            self.pins = pins
            self.onEvent = onEvent
        }

        func run() {
            do {
                do {
                    try look()
                } catch let error as SQLiteError where error.isUnfinishedChange {
                    // A writer killed since the last look left its change unfinished, which the
                    // kept read-only connection cannot undo: a new one does
                    // (``StateDatabase/reading(directory:busyTimeout:seed:)``), once.
                    library = nil
                    try look()
                }
            } catch {
                library = nil
                let message = errorMessage(error)
                if message != lastFailure { onEvent(.failed(message)) }
                lastFailure = message
            }
        }

        private func look() throws {
            var isSnapshot = false
            let opened = try library ?? {
                let state = try StateDatabase.reading(directory: directory, busyTimeout: 0.5)
                isSnapshot = state.isImmutable
                return RegionLibrary(directory: directory, state: state, pins: pins)
            }()
            // Without a state file an empty stand-in was opened, and a file read as it stood
            // (no `-wal`) shows no later change: open it again next time.
            library = FileManager.default.fileExists(atPath: directory.statePath) && !isSnapshot ? opened : nil
            let changes = try service.refresh(from: opened)
            lastFailure = nil
            if !changes.isEmpty { onEvent(.changed(changes)) }
        }
    }
}
