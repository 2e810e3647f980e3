import Dispatch
import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// Installs or updates regions from the catalog: checks, downloads, validates, and swaps the
/// new file in atomically. The installed version stays usable until its successor is verified
/// and in place.
public final class RegionInstaller {
    /// The stages of one region's sync, reported as they start; `installed` once the new file
    /// is in place and recorded, before the download it came from is removed.
    public enum Stage: String, Sendable {
        case downloading, applying, validating, installing
        /// Between the use's delivery and the rename that puts the new file in place (a
        /// fault-injection point).
        case delivered
        /// Between the rename that put the new file in place and its record (a fault-injection point).
        case recording
        case installed
    }

    public enum Outcome: Sendable, Equatable {
        /// Installed or updated from the full package; `previous` is the version it replaced.
        case installed(version: String, previous: String?, downloaded: Int64, resumedFrom: Int64)
        /// The installed file of this very version was damaged and is installed again from the full package.
        case repaired(version: String, downloaded: Int64, resumedFrom: Int64)
        /// Updated by applying a delta to the installed version: `downloaded` bytes of the delta
        /// instead of the full package's `fullSize`.
        case patched(version: String, previous: String, downloaded: Int64, fullSize: Int64)
        /// The installed version equals the catalog's.
        case upToDate(version: String)
    }

    let directory: DataDirectory
    let registry: RegionRegistry
    public let downloader: PackageDownloader
    let clock: Clock
    private let appVersion: AppVersion
    let freeSpace: (String) -> Int64?
    /// Whether a signal is stopping the run (the CLI's signal router says so): what fails
    /// meanwhile fails because the files being assembled are removed under it, not because the
    /// delta or the package is bad, so nothing downloaded is thrown away and no full package is
    /// fetched in a delta's place (found by an attack: Ctrl-C while a delta was applied deleted
    /// it and started the full package's download).
    public var isStopping: @Sendable () -> Bool = { false }
    /// Files found damaged by this installer (by hashing them), with the stamp they had then: the
    /// `sync` after a `precheck` does not hash a large file a second time. Touched by one thread.
    private var damaged: [String: (stamp: RegionFileStamp?, reason: String)] = [:]

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

    /// Syncs one region. Needs the gate's authorization for this run and the data-directory lock;
    /// a region installed, updated or repaired delivers the use (``GateAuthorization/deliver(_:)``).
    ///
    /// When the installed file's tiles hash to one of the region's `deltas`' `fromHash`, the delta
    /// is tried first: downloaded like a package, applied to a copy of the installed file, checked
    /// against the catalog's `contentHash`, validated like a package and swapped in. Any failure
    /// falls back to the full package, told once through `notice`.
    public func sync(
        _ region: CatalogRegion, from catalog: Catalog, authorization: GateAuthorization, lock: DirectoryLock,
        stage: (Stage) -> Void = { _ in }, progress: @escaping (Int64, Int64) -> Void = { _, _ in },
        notice: (String) -> Void = { _ in }
    ) throws -> Outcome {
        try checkAppVersion(for: region, in: catalog)
        let previous = try registry.region(region.id)
        let settled = try settleInstalled(region, previous: previous, notice: notice)
        if let upToDate = settled.upToDate { return upToDate }
        let isDamaged = settled.isDamaged
        LeftoverFiles.removeDeadRunFiles(of: region.id, in: directory, includingDownloads: false)
        try directory.prepare()
        // A delta applies only to the file its record describes: one that is not (a run killed
        // between the rename that installed a newer file and its record, or a file changed by
        // hand) gets the full package instead of a delta applied onto the wrong tiles.
        var usable = isDamaged ? nil : previous.flatMap { usableDelta(for: region, installed: $0) }
        if let previous, usable != nil,
            case .damaged(let reason) = try previous.condition(ofFileAt: directory.regionPath(region.id), hashingUnstamped: false)
        {
            notice(L.localized("region %1$s: the installed file is not the one recorded for version %2$s (%3$s); downloading the full package instead of a delta", region.id, TerminalText.inline(previous.version), reason))
            usable = nil
        } else if let previous, !isDamaged, usable == nil, let recorded = previous.contentHash,
            let other = region.deltas.first(where: { $0.fromVersion == previous.version }), other.fromHash.uppercased() != recorded.uppercased()
        {
            // Said, not skipped in silence (found by an attack): the delta is for other tiles than
            // the record's, which for a full package is its catalog's word (a publisher whose
            // package and catalog disagree makes every delta from that version miss).
            notice(
                L.localized(
                    "region %1$s: the catalog's delta from %2$s is for tiles %3$s, and the installed %2$s's are recorded as %4$s; downloading the full package",
                    region.id, TerminalText.inline(previous.version), other.fromHash.uppercased(), recorded))
        }
        var deltaFailure: (any Error)?
        if let previous, let delta = usable {
            do {
                let outcome = try patch(
                    region, with: delta, previous: previous, catalog: catalog, stage: stage, progress: progress, notice: notice,
                    authorization: authorization)
                warnWithoutVectorLayers(region, notice: notice)
                return outcome
            } catch {
                // The update is in place and only its record failed: no full package over it.
                if PendingInstall.completed(region.id, in: directory) != nil { throw error }
                for path in [directory.patchingPath(region.id), directory.installingPath(region.id)] {
                    try? FileManager.default.removeItem(atPath: path)
                    LeftoverFiles.removeSideFiles(of: path)
                }
                // Not the delta's failure (a stop, a checked result that could not be put in place
                // or read back): the full package would meet the same, and the delta is kept.
                if let failure = error as? DeltaNotAtFault { throw failure.error }
                if isStopping() { throw error }
                deltaFailure = error
                if region.fullPackageAbsence == nil {
                    notice(L.localized("region %1$s: the delta from %2$s could not be used (%3$s); downloading the full package", region.id, TerminalText.inline(delta.fromVersion), Self.reason(error, of: region.id)))
                }
            }
        }
        if let absence = region.fullPackageAbsence {
            // Said as what it is, not as a missing file (exit 74): the delta's own failure (a
            // damaged one: 65), or that this machine needs the package the mirror lacks.
            guard let deltaFailure else { throw RegionError(region: region.id, reason: absence, kind: .unavailable) }
            throw RegionError(
                region: region.id, reason: L.localized("the delta could not be used (%1$s), and %2$s", Self.reason(deltaFailure, of: region.id), absence),
                kind: (deltaFailure as? any MapGateFailure)?.kind ?? .badData)
        }
        try Self.checkSource(of: region.package, in: catalog, client: downloader.client)
        try checkFreeSpace(for: region.package)

        stage(.downloading)
        let download = try downloader.download(region.package, into: directory, keeping: region.deltas.map { region.package(of: $0) }, progress: progress)
        do {
            // The package's bytes are the signed catalog's (its SHA-256 was checked as it
            // streamed in), so its tiles are those the publisher hashed: the catalog's
            // contentHash is recorded, not computed again (``ContentHash/declared(_:)``).
            try checkAndInstall(
                download.outputPath, contentHash: region.contentHash.map { .declared($0) } ?? .computed(mustBe: nil), from: "the package",
                region: region, stage: stage, authorization: authorization)
        } catch {
            try? FileManager.default.removeItem(atPath: download.outputPath)
            if (error as? RegionError)?.kind == .badData, !isStopping() { downloader.discardPartial(region.package, in: directory) }
            throw error
        }
        downloader.discardPartial(region.package, in: directory)
        LeftoverFiles.removeKeptDeltas(of: region.id, in: directory)
        warnWithoutVectorLayers(region, notice: notice)
        let downloaded = region.size - download.resumedFrom
        if isDamaged { return .repaired(version: region.version, downloaded: downloaded, resumedFrom: download.resumedFrom) }
        return .installed(version: region.version, previous: previous?.version, downloaded: downloaded, resumedFrom: download.resumedFrom)
    }

    /// Why `error` happened, without the region's name when it is `region`'s own error: said
    /// inside a sentence that names the region already (found by an attack: "region geo: …
    /// (region geo: …)").
    static func reason(_ error: any Error, of region: String) -> String {
        if let error = error as? RegionError, error.region == region { return error.reason }
        return errorMessage(error)
    }

    /// What can be decided for `region` before the gate counts a use (`sync` asks this first,
    /// holding the data-directory lock, so that a use is spent only on real work): `.upToDate`
    /// when nothing is to be done (a new stamp of an intact file is recorded, a dead run's
    /// leftovers removed); nil when the region must be synced (not installed, another version,
    /// or damaged). Throws when the catalog entry needs a newer app, the disk has no room for it,
    /// or its package is not there (a local file that is missing, or a 4xx such as 404: asked
    /// with a one-byte range request).
    public func precheck(_ region: CatalogRegion, from catalog: Catalog, lock: DirectoryLock) throws -> Outcome? {
        try checkAppVersion(for: region, in: catalog)
        let previous = try registry.region(region.id)
        let settled = try settleInstalled(region, previous: previous, notice: { _ in })
        if let upToDate = settled.upToDate { return upToDate }
        if let previous, !settled.isDamaged, usableDelta(for: region, installed: previous) != nil { return nil }
        // A mirror that carries only a delta this machine cannot use: said before the gate counts.
        if let absence = region.fullPackageAbsence { throw RegionError(region: region.id, reason: absence, kind: .unavailable) }
        try Self.checkSource(of: region.package, in: catalog, client: downloader.client)
        try checkFreeSpace(for: region.package)
        try downloader.probe(region.package)
        return nil
    }

    private func checkAppVersion(for region: CatalogRegion, in catalog: Catalog) throws {
        if let required = catalog.requiredAppVersion(for: region, app: appVersion) {
            throw RegionError(
                region: region.id, reason: L.localized("needs mapgate %1$s or newer (this is %2$s); update the app to install it", "\(required.text)", "\(appVersion.text)"),
                kind: .updateRequired)
        }
    }

    /// The installed file against the catalog's version: `.upToDate` when it is that version and
    /// intact (size and stamp are cheap; the file is hashed only when its stamp changed, and a new
    /// stamp of the same bytes is recorded), with a dead run's leftovers removed; `isDamaged` when
    /// it is that version but its bytes are not what was installed (said through `notice`).
    private func settleInstalled(
        _ region: CatalogRegion, previous: InstalledRegion?, notice: (String) -> Void
    ) throws -> (upToDate: Outcome?, isDamaged: Bool) {
        guard let previous, previous.version == region.version else { return (nil, false) }
        let path = directory.regionPath(region.id)
        // The same version with other tiles in the catalog (a publisher that gave a version
        // number again: found by an attack, this machine kept the first tiles for good while new
        // ones got the others): installed again, so that every machine has the tiles the signed
        // catalog names.
        if let listed = region.contentHash, let installed = previous.contentHash, listed.lowercased() != installed.lowercased() {
            notice(
                L.localized(
                    "region %1$s: the catalog's version %2$s has other tiles than the installed %2$s (contentHash %3$s…, installed %4$s…); installing it again",
                    region.id, region.version, String(listed.prefix(12)), String(installed.prefix(12))))
            return (nil, true)
        }
        // Deleted by hand: damaged as `list` says, so installed again as a repair, not an update
        // from the version to itself.
        guard FileManager.default.fileExists(atPath: path) else {
            notice(L.localized("region %1$s: the installed file is missing; installing it again", region.id))
            return (nil, true)
        }
        let condition: InstalledRegion.Condition
        if let known = damaged[region.id], known.stamp == RegionFileStamp(path: path) {
            condition = .damaged(known.reason)
        } else {
            condition = try previous.condition(ofFileAt: path)
        }
        var record = previous
        switch condition {
        case .intact:
            break
        case .intactWithNewStamp(let stamp):
            record.fileStamp = stamp
        case .damaged(let reason):
            damaged[region.id] = (RegionFileStamp(path: path), reason)
            notice(L.localized("region %1$s: the installed file is damaged (%2$s); installing it again", region.id, reason))
            return (nil, true)
        }
        // The catalog's name for the same version, renamed by the publisher (regions.json): a
        // label, not map data, so taken without a use (found by an attack: the clients kept the
        // old name in `list`, the server's list and TileJSON for good).
        record.name = region.name
        if record != previous { try registry.database.transaction { try registry.save(record) } }
        // A run killed after installing left its download and assembled file: not needed now.
        LeftoverFiles.removeDeadRunFiles(of: region.id, in: directory, includingDownloads: true)
        return (.upToDate(version: previous.version), false)
    }

    /// A `pbf` region whose metadata lists no `vector_layers` installs, but its viewer and style
    /// show nothing: said once, through `notice`.
    private func warnWithoutVectorLayers(_ region: CatalogRegion, notice: (String) -> Void) {
        guard region.format == .pbf, let metadata = try? MBTilesFile(path: directory.regionPath(region.id)).metadata(),
            VectorStyle.layers(fromMetadataJSON: metadata["json"]).isEmpty
        else { return }
        notice(L.localized("region %1$s: a pbf region with no vector_layers in its metadata \"json\": the viewer and style.json will show nothing (tiles are served as usual)", region.id))
    }

    /// A `file://` package only from a `file://` catalog (an http(s) catalog must not make mapgate
    /// read local files), and only a regular file (never a FIFO that hangs, or `/dev/stdin`).
    /// Looked at through `client` (``HTTPClient/localStatus(_:)``): a folder the caller passed in
    /// system mode is looked into by the caller's process.
    static func checkSource(of package: PackageReference, in catalog: Catalog, client: HTTPClient) throws {
        guard let url = URL(string: package.url), url.scheme?.lowercased() == "file" else { return }
        guard URL(string: catalog.sourceURL)?.scheme?.lowercased() == "file" else {
            throw RegionError(region: package.id, reason: L.localized("the package %1$s is a local file named by a remote catalog: refused", "\(package.url)"), kind: .badData)
        }
        let info: LocalFileStatus
        do {
            info = try client.localStatus(url.path)
        } catch {
            throw RegionError(region: package.id, reason: L.localized("the package %1$s cannot be read: %2$s", "\(url.path)", "\(SystemErrorReason.text(error.code))"), kind: .io)
        }
        // A link would make mapgate read a file the mirror does not hold (one to /etc/shadow).
        guard !info.isSymbolicLink else {
            throw RegionError(region: package.id, reason: L.localized("the package %1$s is a symbolic link: refused (a mirror's files must be its own)", "\(url.path)"), kind: .badData)
        }
        guard info.isRegularFile else {
            throw RegionError(region: package.id, reason: L.localized("the package %1$s is not a regular file: refused", "\(url.path)"), kind: .badData)
        }
    }

    func checkFreeSpace(for package: PackageReference) throws {
        let partial = FileManager.default.sizeOfItem(atPath: PackageDownloader.partialPath(package, in: directory))
        let needed = max(0, package.size - partial) + package.installedSize
        guard let free = freeSpace(directory.path) else { return }
        guard free >= needed else {
            throw RegionError(
                region: package.id,
                reason: L.localized("not enough free disk space in %1$s: needs %2$s (download %3$s, installed %4$s), %5$s available", "\(directory.path)", "\(ByteCount.text(needed))", "\(ByteCount.text(max(0, package.size - partial)))", "\(ByteCount.text(package.installedSize))", "\(ByteCount.text(free))"),
                kind: .io)
        }
    }

    struct Details {
        var format: TileFormat
        var zoom: ClosedRange<Int>
        var bounds: [Double]?
    }

    /// Checks that a downloaded file is a usable MBTiles region matching its catalog entry.
    static func validate(_ path: String, against region: CatalogRegion, checkingIntegrity: Bool = true) throws -> Details {
        func fail(_ reason: String) -> RegionError { RegionError(region: region.id, reason: L.localized("invalid package: %1$s", "\(reason)"), kind: .badData) }
        do {
            let inspection = try MBTilesInspection.inspect(path, checkingIntegrity: checkingIntegrity)
            let format = inspection.format
            guard format == region.format else { throw fail(L.localized("tiles are %1$s, the catalog says %2$s", "\(format.rawValue)", "\(region.format.rawValue)")) }
            let zoom = inspection.zoom
            guard zoom.lowerBound >= region.minzoom, zoom.upperBound <= region.maxzoom else {
                throw fail(L.localized("zoom %1$s–%2$s is outside the catalog's %3$s–%4$s", "\(zoom.lowerBound)", "\(zoom.upperBound)", "\(region.minzoom)", "\(region.maxzoom)"))
            }
            return Details(format: format, zoom: zoom, bounds: inspection.bounds ?? region.bounds)
        } catch let error as MBTilesError {
            throw fail(error.reason)
        }
    }

    /// A use's delivery step (``GateAuthorization/deliver(_:)``).
    typealias Delivery = (() throws -> Void) throws -> Void

    /// Where the recorded content hash of a new file's tiles comes from.
    enum ContentHash {
        /// Computed from its tiles; when `mustBe` names one (the catalog's, for a delta's result),
        /// the file is refused unless its tiles give it.
        case computed(mustBe: String?)
        /// The catalog's, for a full package: its bytes are the ones the signed catalog's SHA-256
        /// names, so its tiles are the ones the publisher hashed. Hashing them again (MD5, a
        /// serial pass at about 600 MB/s: most of the check's time) could only find the
        /// publisher at odds with itself, which a later delta's result check still finds (by MD5,
        /// or by the LtHashes the publisher took of its own files).
        /// Also a delta's result checked by its LtHash whose tile count is not known (a normalized
        /// file, a base recorded without a count, a result made compact): passed over, not hashed.
        case declared(String)
        /// A delta's result that its apply checked by LtHash (``DeltaSummary/resultChecked``),
        /// with its tiles counted from the base's count and the change's: none of the whole-file
        /// passes is made. Its tiles are not passed over (those the delta wrote were checked one by
        /// one by the apply, the others are the base's, checked at its install), its pages are not
        /// `quick_check`ed (the same: the base's, and those SQLite wrote), and its SHA-256 is not
        /// taken (``InstalledRegion/sha256``): each pass was more of the update's time than the
        /// delta's download and apply together (docs/decisions/delta-in-place.md).
        case checkedByDelta(String, tileCount: Int)
    }

    /// Validates the file at `path` on this thread while others fsync it (waiting for the disk
    /// from the start, not after the checks), take its SHA-256 and pass over its tiles
    /// (checked, counted and, unless the catalog's hash is taken, hashed), each reading the whole
    /// file; checks the tiles' hash when one is expected, then installs it. `source` names where
    /// the file came from, for the error; `delta` is the SHA-256 of the delta that gave it, if one did.
    func checkAndInstall(
        _ path: String, contentHash: ContentHash, from source: String, delta: String? = nil, region: CatalogRegion, stage: (Stage) -> Void,
        authorization: GateAuthorization
    ) throws {
        stage(.validating)
        let wasWAL = try Self.leaveWAL(path, region: region)
        // Each job on its own read-only descriptor or connection. On a failure here they are
        // left to finish on their own, on a file the caller removes.
        let declared: String? = if case .declared(let hex) = contentHash { hex } else { nil }
        let checkedByDelta: TilesetHash? = if case .checkedByDelta(let hex, let count) = contentHash { .checked(hex: hex, tileCount: count) } else { nil }
        let flushed = BackgroundJob<Void> { try Self.flush(path, region: region) }
        let content = BackgroundJob<TilesetHash> { try checkedByDelta ?? TilesetHash.compute(ofFileAt: path, declaredHex: declared) }
        let sha256 = BackgroundJob<String?> { checkedByDelta != nil ? nil : try SHA256Hasher.hex(ofFileAt: path) }
        // A read that the disk failed (EIO: a failing card) is said as that, naming the file, and
        // costs no download: the bytes were checked against the catalog as they came (found by an
        // attack: it was "invalid package" or a bare "input/output error", and the verified
        // download was deleted and fetched again, on every run). SQLite says "malformed" of a page
        // the disk would not give it (SQLITE_CORRUPT, no errno): a file found damaged is read
        // through once more, and a read error there is the disk's.
        func unreadable(_ error: any Error) -> RegionError? {
            if let error = error as? RegionError, error.kind == .io { return error }
            let isIO = !(error is RegionError) && ((error as? SQLiteError)?.isIOError == true || error is CocoaError || (error as? any MapGateFailure)?.kind == .io)
            // The file is named once (SQLite's and the system's messages name it too).
            guard let reason = isIO ? errorMessage(error).replacing(path + ": ", with: "") : Self.readError(path) else { return nil }
            return RegionError(region: region.id, reason: L.localized("cannot read the new file %1$s: %2$s", path, reason), kind: .io)
        }
        /// The checks' results, or the first failure as said to the user.
        func check(_ validated: () throws -> Details, _ hashed: () throws -> String?, _ counted: () throws -> TilesetHash) throws -> (Details, String?, TilesetHash) {
            let details: Details
            let fileHash: String?
            do {
                details = try validated()
                fileHash = try hashed()
            } catch {
                throw unreadable(error) ?? error
            }
            do {
                return (details, fileHash, try counted())
            } catch {
                throw unreadable(error) ?? RegionError(region: region.id, reason: L.localized("invalid package: %1$s", "\(errorMessage(error))"), kind: .badData)
            }
        }
        let integrity = checkedByDelta == nil
        let checked: (Details, String?, TilesetHash)
        do {
            checked = try check({ try Self.validate(path, against: region, checkingIntegrity: integrity) }, { try sha256.wait() }, { try content.wait() })
        } catch {
            // Checked once more, one pass after the other, before the file is called damaged or
            // unreadable: a read the disk failed once (a card's slow retry, a loose contact) gives
            // the file on the next try (found by an attack: the run failed, 74, over one read).
            checked = try check(
                { try Self.validate(path, against: region, checkingIntegrity: integrity) }, { integrity ? try SHA256Hasher.hex(ofFileAt: path) : nil },
                { try checkedByDelta ?? TilesetHash.compute(ofFileAt: path, declaredHex: declared) })
        }
        let (details, fileHash, tiles) = checked
        // A file whose SHA-256 is not taken is known by its tiles and its metadata.
        let metadataDigest: String?
        do {
            metadataDigest = fileHash == nil ? try MBTilesFile(path: path).metadataDigest() : nil
        } catch {
            throw unreadable(error) ?? RegionError(region: region.id, reason: L.localized("invalid package: %1$s", "\(errorMessage(error))"), kind: .badData)
        }
        try flushed.wait()
        if let problem = tiles.nullTileProblem {
            throw RegionError(region: region.id, reason: L.localized("invalid package: %1$s", "\(problem)"), kind: .badData)
        }
        if case .computed(mustBe: let expectedContentHash?) = contentHash, tiles.hex.uppercased() != expectedContentHash.uppercased() {
            throw RegionError(
                region: region.id, reason: L.localized("%1$s gave tiles with hash %2$s, not the %3$s the catalog declares (contentHash)", "\(source)", "\(tiles.hex)", "\(expectedContentHash)"),
                kind: .badData)
        }
        stage(.installing)
        let size = FileManager.default.sizeOfItem(atPath: path)
        try install(
            path, sha256: fileHash, metadataDigest: metadataDigest, size: size, content: tiles, region: region, details: details, packageWasWAL: wasWAL, delta: delta,
            authorization: authorization, stage: stage)
        stage(.installed)
    }

    /// Puts in place the checked file of a pending install whose run was killed between its use's
    /// delivery and the rename (a SIGKILL, a power cut), so that the use it cost is not paid twice
    /// (found by an attack: the next run fetched the package again and charged another use). Only
    /// when the use that paid for it is one of the gate's last delivered (`paid`,
    /// ``GateRecord/recentDeliveries``), and the file, one of mapgate's own in `partial/` for that
    /// region (a regular file, not a link), is that region's version in the signed catalog,
    /// checked as a download is (validated, its tiles' hash the catalog's). Otherwise nothing is
    /// done, and the region is fetched and paid for as any (found by the attack on this: a pending
    /// record written by hand installed a file the catalog never offered, and a link was renamed
    /// into `regions/`).
    /// Returns whether the file was put in place.
    @discardableResult
    func finishPaidInstall(_ entry: PendingInstall.Entry, paid: [String], catalog: Catalog) -> Bool {
        let id = entry.record.id
        var info = stat()
        guard let paidBy = entry.paidBy, paid.contains(paidBy), let file = entry.file,
            [directory.installingPath(id), directory.patchingPath(id)].contains(file),
            lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            let region = catalog.regions.first(where: { $0.id == id }), region.version == entry.record.version,
            (try? Self.validate(file, against: region)) != nil,
            entry.names(file),
            let tiles = try? TilesetHash.compute(ofFileAt: file, declaredHex: nil),
            tiles.hex.uppercased() == (region.contentHash ?? entry.record.contentHash)?.uppercased(), tiles.nullTileProblem == nil
        else { return false }
        guard DurableFile.rename(file, over: directory.regionPath(id), folder: directory.regionsPath) == nil else { return false }
        LeftoverFiles.removeSideFiles(of: directory.regionPath(id))
        return true
    }

    /// Why reading the file at `path` from start to end fails (EIO from a failing disk), nil when
    /// it reads whole.
    static func readError(_ path: String) -> String? {
        guard let file = UnixFile(forReadingAtPath: path) else { return SystemErrorReason.text(errno) }
        defer { try? file.close() }
        do {
            while let chunk = try file.read(upToCount: 1 << 20), !chunk.isEmpty {}
            return nil
        } catch {
            return errorMessage(error)
        }
    }

    /// A file in WAL mode (GDAL and others write them) makes every reader, read-only ones too,
    /// create `-wal` and `-shm` beside it, which a read-only connection never removes: in
    /// `partial/` while it is validated, in `regions/` while it is served. It is switched to
    /// rollback-journal mode here, before anyone reads it, by its two header bytes alone (a
    /// package comes without a `-wal`, so nothing is pending): the file stays the package's bytes
    /// but for those two, which the record keeps, so `mirror` can rebuild the package (found by an
    /// attack: `PRAGMA journal_mode` also rewrote the change counter and the SQLite version, and a
    /// region from GDAL could never be mirrored). Returns whether it was in WAL mode.
    static func leaveWAL(_ path: String, region: CatalogRegion) throws -> Bool {
        defer { LeftoverFiles.removeSideFiles(of: path) }
        do {
            return try SQLiteHeader.leaveWAL(path)
        } catch {
            throw RegionError(region: region.id, reason: errorMessage(error), kind: .io)
        }
    }

    /// fsync: the new file's bytes are on disk before the rename makes it the installed one.
    private static func flush(_ path: String, region: CatalogRegion) throws {
        if let reason = DurableFile.flush(path) {
            throw RegionError(region: region.id, reason: L.localized("cannot write the region file %1$s: %2$s", "\(path)", "\(reason)"), kind: .io)
        }
    }

    /// Renames the checked file over the old one, fsyncs the folder, then records it (with the
    /// tiles' content hash and count) in one transaction.
    /// The rename is the delivery (`deliver`, ``GateAuthorization/deliver(_:)``): the use is
    /// kept once the new file is in place, decided in one step with a signal's give-back, so a
    /// run stopped before the record is saved has the region and has paid for it.
    private func install(
        _ path: String, sha256: String?, metadataDigest: String?, size: Int64, content: TilesetHash, region: CatalogRegion, details: Details,
        packageWasWAL: Bool, delta: String?, authorization: GateAuthorization, stage: (Stage) -> Void
    ) throws {
        let destination = directory.regionPath(region.id)
        var record = InstalledRegion(
            id: region.id, name: region.name, version: region.version, format: details.format, sha256: sha256,
            size: size, installedAt: clock.now, minzoom: details.zoom.lowerBound, maxzoom: details.zoom.upperBound,
            bounds: details.bounds, sourceURL: URLCredentials.removed(from: region.url), contentHash: content.hex, tileCount: content.tileCount,
            packageWasWAL: packageWasWAL ? true : nil, deltaSHA256: delta, metadataSHA256: metadataDigest)
        // Written before the rename and removed after the record: a run killed in between leaves
        // a file that readers and the next sync know for the new version (issue 40, item 4).
        do {
            try PendingInstall.write(record, file: path, paidBy: authorization.reservationID, in: directory)
        } catch {
            // Named (found by an attack: "cannot write …/regions/.big.pending.json: permission
            // denied" said no region).
            throw RegionError(region: region.id, reason: errorMessage(error), kind: (error as? any MapGateFailure)?.kind ?? .io)
        }
        do {
            try authorization.deliver {
                // The use is told and kept from here: a run killed before the rename leaves the
                // checked file, and a pending record naming this use, for the next run to put in
                // place without another (``RegionLibrary/finishPendingInstalls(lock:finishing:)``).
                stage(.delivered)
                if let reason = DurableFile.rename(path, over: destination, folder: directory.regionsPath) {
                    throw RegionError(region: region.id, reason: L.localized("cannot move the new file into %1$s: %2$s", "\(destination)", "\(reason)"), kind: .io)
                }
            }
        } catch {
            PendingInstall.remove(region.id, in: directory)
            throw error
        }
        stage(.recording)
        // Side files a reader of the replaced file (in WAL mode, from an earlier mapgate) made.
        LeftoverFiles.removeSideFiles(of: destination)
        record.fileStamp = RegionFileStamp(path: destination)
        do {
            try registry.database.transaction { try registry.save(record) }
        } catch {
            // The new file is in place and its use counted: the region is this version (its
            // pending record says so to every reader, and the next writer saves it). Said as
            // that, naming the region (found by an attack: a disk full at this moment said only
            // "the disk is full: SQLite error 13 in …/state.sqlite", as if nothing was installed).
            throw RegionError(
                region: region.id,
                reason: L.localized(
                    "version %1$s is installed, but its record could not be saved now (%2$s); the next mapgate run saves it", region.version,
                    errorMessage(error)),
                kind: .io)
        }
        PendingInstall.remove(region.id, in: directory)
    }
}
