import Foundation
import MapGate
import MapGateDemo
import TestSupport

/// A data directory, an origin serving packages and a catalog, and the parts that sync them.
final class SyncHarness: @unchecked Sendable {
    // Its parts are set once in init; a test's server thread only opens new gate stores from it.
    let work: TemporaryDirectory
    let origin: TestOrigin
    let builder: CatalogBuilder
    let directory: DataDirectory
    let state: StateDatabase
    var freeSpace: (String) -> Int64? = freeDiskSpace(at:)
    /// The waits between download attempts of every installer the harness made (none is slept).
    let sleeps = SleepRecorder()

    init() throws {
        work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        origin = try TestOrigin(root: work.file("www"))
        builder = CatalogBuilder(root: work.file("www"))
        directory = DataDirectory(path: work.file("data"))
        state = try StateDatabase(directory: directory)
    }

    func catalog(path: String = "/catalog.json") throws -> Catalog {
        try fetchedCatalog(path: path).catalog
    }

    /// The catalog as its source fetched it, for a gate to accept (``Gate/accept(_:)``).
    func fetchedCatalog(path: String = "/catalog.json") throws -> CatalogSource.Fetched {
        try builder.write()
        return try CatalogSource(url: origin.baseURL + path, trustedKeys: [], requiresSignature: false, client: HTTPClient()).fetch()
    }

    /// The gate's copies: the harness's own state folder and the data directory.
    func gateStore(clock: Clock = .system, busyTimeout: Double = 10) throws -> GateStore {
        try GateStore(stateFolder: work.file("state"), directory: directory, clock: clock, busyTimeout: busyTimeout)
    }

    func authorization(opening: [String] = [], installing: [String] = []) throws -> GateAuthorization {
        try Gate(store: try gateStore(), settings: .unreachable).authorizeUse(opening: opening, installing: installing)
    }

    func installer(maxAttempts: Int = 4, stallSeconds: Int = 30, appVersion: String = BuildInfo.version) throws -> RegionInstaller {
        let recorder = sleeps
        let downloader = PackageDownloader(
            client: HTTPClient(), retry: RetryPolicy(maxAttempts: maxAttempts, initialDelay: 0.01, sleep: { recorder.record($0) }),
            stallBytesPerSecond: 1000, stallSeconds: stallSeconds)
        return RegionInstaller(
            directory: directory, state: state, downloader: downloader, appVersion: try AppVersion(appVersion), freeSpace: freeSpace)
    }

    @discardableResult
    func sync(_ id: String, catalog: Catalog? = nil, installer: RegionInstaller? = nil) throws -> RegionInstaller.Outcome {
        let catalog = try catalog ?? self.catalog()
        let lock = try DirectoryLock(directory: directory)
        guard let region = catalog.region(id) else { throw MissingFixture(path: "region \(id) in the catalog") }
        return try (installer ?? self.installer()).sync(region, from: catalog, authorization: try authorization(installing: [id]), lock: lock)
    }

    var library: RegionLibrary { RegionLibrary(directory: directory, state: state) }

    /// Takes the file now at `id`'s path for the one installed (its size and SHA-256, no stamp):
    /// for tests that change an installed file so that a reader meets what `sync` would refuse
    /// (the server checks a file against its record before it opens it).
    func recordAsInstalled(_ id: String) throws {
        let path = directory.regionPath(id)
        try state.database.execute(
            "UPDATE regions SET sha256 = ?, size = ?, file_modified = NULL, file_inode = NULL WHERE id = ?",
            [.text(try SHA256Hasher.hex(ofFileAt: path)), .integer(FileManager.default.sizeOfItem(atPath: path)), .text(id)])
    }

    /// Files left in the partial folder.
    var leftovers: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.partialPath)) ?? []).sorted()
    }

    /// All tiles of an MBTiles file as "z/x/y" → bytes.
    static func tiles(of path: String) throws -> [String: Data] {
        var tiles: [String: Data] = [:]
        try MBTilesFile(path: path).forEachTile { z, x, y, data in tiles["\(z)/\(x)/\(y)"] = data }
        return tiles
    }
}

final class SleepRecorder: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var delays: [Double] = []
    func record(_ delay: Double) { lock.withLock { delays.append(delay) } }
    var recorded: [Double] { lock.withLock { delays } }
}
