import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Installs or updates regions from the catalog: checks, downloads, validates, and swaps the
/// new file in atomically. The installed version stays usable until its successor is verified
/// and in place.
public final class RegionInstaller {
    /// The stages of one region's sync, reported as they start.
    public enum Stage: String, Sendable {
        case downloading, validating, installing
    }

    public enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Installed or updated; `previous` is the version it replaced.
        case installed(version: String, previous: String?, downloaded: Int64, resumedFrom: Int64)
        /// The installed version equals the catalog's.
        case upToDate(version: String)

        public var description: String {
            switch self {
            case .upToDate(let version):
                return "\(version) up to date"
            case .installed(let version, let previous, let downloaded, let resumedFrom):
                let what = previous.map { "updated from \($0) to \(version)" } ?? "installed \(version)"
                return what + " (\(downloaded) bytes downloaded" + (resumedFrom > 0 ? ", resumed at byte \(resumedFrom))" : ")")
            }
        }
    }

    private let directory: DataDirectory
    private let registry: RegionRegistry
    private let downloader: PackageDownloader
    private let clock: Clock
    private let appVersion: AppVersion
    private let freeSpace: (String) -> Int64?

    package init(
        directory: DataDirectory, state: StateDatabase, downloader: PackageDownloader, clock: Clock = .system,
        appVersion: AppVersion, freeSpace: @escaping (String) -> Int64? = freeDiskSpace(at:)
    ) {
        self.directory = directory
        registry = RegionRegistry(state: state)
        self.downloader = downloader
        self.clock = clock
        self.appVersion = appVersion
        self.freeSpace = freeSpace
    }

    public convenience init(directory: DataDirectory, state: StateDatabase, downloader: PackageDownloader) throws {
        self.init(directory: directory, state: state, downloader: downloader, appVersion: try AppVersion(BuildInfo.version))
    }

    /// Syncs one region. Needs the gate's authorization for this run and the data-directory lock.
    public func sync(
        _ region: CatalogRegion, from catalog: Catalog, authorization: GateAuthorization, lock: DirectoryLock,
        stage: (Stage) -> Void = { _ in }, progress: @escaping (Int64, Int64) -> Void = { _, _ in }
    ) throws -> Outcome {
        if let required = catalog.requiredAppVersion(for: region, app: appVersion) {
            throw RegionError(
                region: region.id, reason: "needs mapgate \(required.text) or newer (this is \(appVersion.text)); update the app to install it",
                kind: .updateRequired)
        }
        let previous = try registry.region(region.id)
        if let previous, previous.version == region.version,
            FileManager.default.fileExists(atPath: directory.regionPath(region.id))
        {
            return .upToDate(version: previous.version)
        }
        try directory.prepare()
        try Self.checkSource(of: region, in: catalog)
        try checkFreeSpace(for: region)

        stage(.downloading)
        let download = try downloader.download(region, into: directory, progress: progress)
        do {
            stage(.validating)
            let details = try Self.validate(download.outputPath, against: region)
            stage(.installing)
            try install(download, region: region, details: details)
        } catch {
            try? FileManager.default.removeItem(atPath: download.outputPath)
            if (error as? RegionError)?.kind == .badData { downloader.discardPartial(region, in: directory) }
            throw error
        }
        downloader.discardPartial(region, in: directory)
        return .installed(version: region.version, previous: previous?.version, downloaded: region.size - download.resumedFrom, resumedFrom: download.resumedFrom)
    }

    /// A `file://` package only from a `file://` catalog (an http(s) catalog must not make mapgate
    /// read local files), and only a regular file (never a FIFO that hangs, or `/dev/stdin`).
    static func checkSource(of region: CatalogRegion, in catalog: Catalog) throws {
        guard let url = URL(string: region.url), url.scheme?.lowercased() == "file" else { return }
        guard URL(string: catalog.sourceURL)?.scheme?.lowercased() == "file" else {
            throw RegionError(region: region.id, reason: "the package \(region.url) is a local file named by a remote catalog: refused", kind: .badData)
        }
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            throw RegionError(region: region.id, reason: "the package \(url.path) cannot be read: \(String(cString: strerror(errno)))", kind: .io)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw RegionError(region: region.id, reason: "the package \(url.path) is not a regular file: refused", kind: .badData)
        }
    }

    private func checkFreeSpace(for region: CatalogRegion) throws {
        let partial = (try? FileManager.default.attributesOfItem(atPath: PackageDownloader.partialPath(region, in: directory))[.size] as? NSNumber)?.int64Value ?? 0
        let needed = max(0, region.size - partial) + region.installedSize
        guard let free = freeSpace(directory.path) else { return }
        guard free >= needed else {
            throw RegionError(
                region: region.id,
                reason: "not enough free disk space in \(directory.path): needs \(needed) bytes (download \(region.size), installed \(region.installedSize)), \(free) available",
                kind: .io)
        }
    }

    struct Details {
        var format: TileFormat
        var zoom: ClosedRange<Int>
        var bounds: [Double]?
    }

    /// Checks that a downloaded file is a usable MBTiles region matching its catalog entry.
    static func validate(_ path: String, against region: CatalogRegion) throws -> Details {
        func fail(_ reason: String) -> RegionError { RegionError(region: region.id, reason: "invalid package: \(reason)", kind: .badData) }
        do {
            let inspection = try MBTilesInspection.inspect(path)
            let format = inspection.format
            guard format == region.format else { throw fail("tiles are \(format.rawValue), the catalog says \(region.format.rawValue)") }
            let zoom = inspection.zoom
            guard zoom.lowerBound >= region.minzoom, zoom.upperBound <= region.maxzoom else {
                throw fail("zoom \(zoom.lowerBound)–\(zoom.upperBound) is outside the catalog's \(region.minzoom)–\(region.maxzoom)")
            }
            return Details(format: format, zoom: zoom, bounds: inspection.bounds ?? region.bounds)
        } catch let error as MBTilesError {
            throw fail(error.reason)
        }
    }

    /// fsync, rename over the old file, fsync the folder, then record it in one transaction.
    private func install(_ download: PackageDownloader.Result, region: CatalogRegion, details: Details) throws {
        let destination = directory.regionPath(region.id)
        guard rename(download.outputPath, destination) == 0 else {
            throw RegionError(region: region.id, reason: "cannot move the new file into \(destination): \(String(cString: strerror(errno)))", kind: .io)
        }
        let folder = open(directory.regionsPath, O_RDONLY | O_DIRECTORY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        let record = InstalledRegion(
            id: region.id, name: region.name, version: region.version, format: details.format, sha256: download.sha256,
            size: download.size, installedAt: clock.now, minzoom: details.zoom.lowerBound, maxzoom: details.zoom.upperBound,
            bounds: details.bounds, sourceURL: region.url)
        try registry.database.transaction { try registry.save(record) }
    }
}
