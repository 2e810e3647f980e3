import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

/// Installs the publisher's styles that draw the installed regions: each package downloaded and
/// verified as a region's is (resumable, size and SHA-256, gunzipped while it streams), its bundle
/// checked, then renamed over `<data>/styles/ID.json`. The installed style stays until then.
public final class StyleInstaller {
    public enum Outcome: Sendable, Equatable {
        case installed(version: String, previous: String?, downloaded: Int64)
        case upToDate(version: String)
    }

    private let directory: DataDirectory
    private let downloader: PackageDownloader

    public init(directory: DataDirectory, downloader: PackageDownloader) {
        self.directory = directory
        self.downloader = downloader
    }

    /// The catalog's styles whose regions are all in `regions`, in the catalog's order.
    public static func styles(in catalog: Catalog, drawing regions: Set<String>) -> [CatalogStyle] {
        catalog.styles.filter { !$0.regions.isEmpty && $0.regions.allSatisfy(regions.contains) }
    }

    /// The installed style `id`, or nil when there is none or its file does not pass the checks.
    public func installed(_ id: String) -> StyleBundle? {
        let path = directory.stylePath(id)
        guard FileManager.default.sizeOfItem(atPath: path) <= StyleBundle.maximumSize, let data = FileManager.default.contents(atPath: path) else {
            return nil
        }
        return try? StyleBundle.decode(data, expectedID: id)
    }

    public func isUpToDate(_ style: CatalogStyle) -> Bool {
        installed(style.id)?.version == style.version
    }

    /// Installs `style` unless the installed one is its version. Needs the gate's authorization for
    /// this run and the data-directory lock; a style installed delivers the use.
    public func sync(
        _ style: CatalogStyle, from catalog: Catalog, authorization: GateAuthorization, lock: DirectoryLock,
        progress: @escaping (Int64, Int64) -> Void = { _, _ in }
    ) throws -> Outcome {
        let previous = installed(style.id)
        if previous?.version == style.version { return .upToDate(version: style.version) }
        let package = style.package
        // What a killed run left being assembled (its resumable download stays).
        try? FileManager.default.removeItem(atPath: directory.installingPath(package.id))
        let download: PackageDownloader.Download
        do {
            try RegionInstaller.checkSource(of: package, in: catalog, client: downloader.client)
            try directory.prepare()
            download = try downloader.download(package, into: directory, progress: progress)
        } catch let error as RegionError {
            throw StyleError(style: style.id, reason: error.reason, kind: error.kind)
        }
        defer { try? FileManager.default.removeItem(atPath: download.outputPath) }
        do {
            try install(download.outputPath, style: style, deliver: authorization.deliver)
        } catch let error as StyleError {
            if error.kind == .badData { downloader.discardPartial(package, in: directory) }
            throw error
        }
        downloader.discardPartial(package, in: directory)
        return .installed(version: style.version, previous: previous?.version, downloaded: style.size - download.resumedFrom)
    }

    /// Checks the downloaded package and renames it into place; the rename is the use's delivery.
    private func install(_ path: String, style: CatalogStyle, deliver: RegionInstaller.Delivery) throws {
        func fail(_ reason: String, kind: FailureKind = .badData) -> StyleError { StyleError(style: style.id, reason: reason, kind: kind) }
        guard let data = FileManager.default.contents(atPath: path) else { throw fail(L.localized("cannot read the downloaded package %1$s", "\(path)"), kind: .io) }
        let bundle = try StyleBundle.decode(data, expectedID: style.id)
        guard bundle.version == style.version else {
            throw fail(L.localized("the package holds version %1$s, the catalog declares %2$s", "\(bundle.version)", "\(style.version)"))
        }
        guard bundle.regions == style.regions else {
            throw fail(L.localized("the package draws %1$s, the catalog declares %2$s", "\(bundle.regions.joined(separator: ", "))", "\(style.regions.joined(separator: ", "))"))
        }
        do {
            try FileManager.default.createDirectory(atPath: directory.stylesPath, withIntermediateDirectories: true)
        } catch {
            throw fail(L.localized("cannot create %1$s: %2$s", "\(directory.stylesPath)", "\(errorMessage(error))"), kind: .io)
        }
        if let reason = DurableFile.flush(path) { throw fail(L.localized("cannot write the style file %1$s: %2$s", "\(path)", "\(reason)"), kind: .io) }
        let destination = directory.stylePath(style.id)
        try deliver {
            if let reason = DurableFile.rename(path, over: destination, folder: directory.stylesPath) {
                throw fail(L.localized("cannot move the new file into %1$s: %2$s", "\(destination)", "\(reason)"), kind: .io)
            }
        }
    }
}
