import Foundation
import Synchronization

/// Keeps a running server's regions current: once every `interval` it re-reads the regions
/// table and each file's identity (``TileService/refresh(from:)``), so a region installed,
/// updated (by rename, as `sync` does) or removed while serving is served, or 404, within it.
/// A failed look keeps the regions served and reaches `onEvent`; none is swallowed.
public final class RegionWatcher: Sendable {
    public enum Event: Sendable {
        case changed(TileService.Changes)
        case failed(String)
    }

    private let service: TileService
    private let directory: DataDirectory
    private let interval: Double
    private let onEvent: @Sendable (Event) -> Void
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    public init(service: TileService, directory: DataDirectory, interval: Double = 1, onEvent: @escaping @Sendable (Event) -> Void) {
        self.service = service
        self.directory = directory
        self.interval = interval
        self.onEvent = onEvent
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "region-watcher"
        thread.start()
    }

    public func stop() {
        let (exchanged, _) = stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent)
        guard exchanged else { return }
        wake.signal()
        done.wait()
    }

    private func run() {
        defer { done.signal() }
        // The watcher's own connection to the state database, opened on its thread.
        var library: RegionLibrary?
        var lastFailure: String?
        while true {
            _ = wake.wait(timeout: .now() + interval)
            if stopping.load(ordering: .acquiring) { return }
            do {
                let opened = try library ?? RegionLibrary(directory: directory, state: try StateDatabase(directory: directory, busyTimeout: 0.5))
                library = opened
                let changes = try service.refresh(from: opened)
                lastFailure = nil
                if !changes.isEmpty { onEvent(.changed(changes)) }
            } catch {
                library = nil
                let message = (error as? LocalizedError)?.errorDescription ?? String(describing: error)
                if message != lastFailure { onEvent(.failed(message)) }
                lastFailure = message
            }
        }
    }
}
