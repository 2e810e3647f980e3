import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

/// The delta path of ``RegionInstaller/sync(_:from:authorization:lock:stage:progress:notice:)``:
/// which delta may be used, and the update through it (download, apply to a copy, check, install).
extension RegionInstaller {
    /// The delta from the installed version whose `fromHash` is the installed file's content hash,
    /// if the file is there and the catalog names the result's `contentHash`. Without it the
    /// delta's own metadata would be the only word on what it gives: a delta to an older version,
    /// offered again, would be installed under the new version's name. The version must be the
    /// installed one too, not only the tiles: two versions with the same tiles and other metadata
    /// (an attribution changed) hash alike, and a delta carries the metadata changes from its own
    /// base (found by an attack: a client on 1 took the delta from 2 and kept 1's attribution).
    func usableDelta(for region: CatalogRegion, installed: InstalledRegion) -> CatalogDelta? {
        guard region.contentHash != nil, let hash = installed.contentHash,
            FileManager.default.fileExists(atPath: directory.regionPath(region.id))
        else { return nil }
        return region.deltas.first { $0.fromVersion == installed.version && $0.fromHash.uppercased() == hash.uppercased() }
    }

    /// Updates through `delta`: download, apply to a copy, check, validate, install.
    func patch(
        _ region: CatalogRegion, with delta: CatalogDelta, previous: InstalledRegion, catalog: Catalog, stage: (Stage) -> Void,
        progress: @escaping (Int64, Int64) -> Void, notice: (String) -> Void, authorization: GateAuthorization
    ) throws -> Outcome {
        // The delta travels like a package: same resume, retries, streaming hash and limits.
        let package = region.package(of: delta)
        try Self.checkSource(of: package, in: catalog, client: downloader.client)
        try checkFreeSpace(for: package)
        stage(.downloading)
        let download = try downloader.download(package, into: directory, keeping: [region.package], progress: progress)
        defer { try? FileManager.default.removeItem(atPath: download.outputPath) }
        var reached: Stage?
        do {
            return try apply(
                download, of: package, to: region, with: delta, previous: previous,
                stage: {
                    reached = $0
                    stage($0)
                }, notice: notice, authorization: authorization)
        } catch {
            // In place already (the rename is the delivery), only its record failed (a full disk
            // under the state database; found by an attack: the delta was thrown away and the full
            // package fetched over an update that had worked): the delta is kept as after an
            // update, and the next run saves the record (``RegionLibrary/finishPendingInstalls(lock:)``).
            if PendingInstall.completed(region.id, in: directory) != nil {
                keepDelta(package)
                throw error
            }
            // A result checked against the catalog that could not be put in place (a folder that
            // cannot be written, a failing disk), a result the disk would not read back (EIO), or
            // a signal that removed the copy under the apply: the delta is kept as downloaded, for
            // the next run to apply again without fetching it (found by an attack: each threw it
            // away and fetched the full package, which met the same fault or was cut short).
            let isDisk = reached == .validating && (error as? RegionError)?.kind == .io
            if reached == .installing || isDisk || isStopping() { throw DeltaNotAtFault(error: error) }
            // Downloaded whole and still of no use: its bytes are given back before the full
            // package is fetched (found by an attack: on a nearly full disk they, and the copy's
            // journal, kept the full package from fitting, in every later run too).
            downloader.discardPartial(package, in: directory)
            throw error
        }
    }

    /// Applies the downloaded delta to a copy of the installed file, checks it and installs it.
    private func apply(
        _ download: PackageDownloader.Download, of package: PackageReference, to region: CatalogRegion, with delta: CatalogDelta, previous: InstalledRegion,
        stage: (Stage) -> Void, notice: (String) -> Void, authorization: GateAuthorization
    ) throws -> Outcome {
        stage(.applying)
        let patched = directory.patchingPath(region.id)
        try? FileManager.default.removeItem(atPath: patched)
        try checkRoomToApply(region.id, delta: download.outputPath)
        do {
            try FileCopy.copy(from: directory.regionPath(region.id), to: patched)
        } catch {
            throw RegionError(region: region.id, reason: L.localized("cannot copy the installed file to apply the delta: %1$s", "\(errorMessage(error))"), kind: .io)
        }
        // The copy goes to the disk while the delta is applied (the copy only started its
        // writeback), so that the fsync before the rename waits for the delta's pages alone.
        // Not waited for: a copy thrown away is flushed for nothing, and harms nothing.
        _ = BackgroundJob<Void> { _ = DurableFile.flush(patched) }
        // The result's tiles are checked by the apply (a delta with its change's LtHash) or below, on another
        // thread while the file is validated (the result's MD5 against the catalog's). The base's
        // is not hashed again: it was recorded at install, and a base changed since then cannot
        // give the declared result.
        let summary: DeltaSummary
        do {
            // No fsync at the apply's commit: it would wait for the whole copy to be written;
            // the file is fsynced once it is checked, before the rename installs it, and a run
            // stopped before then leaves a scratch file that is never installed.
            summary = try MBTilesDelta.apply(delta: download.outputPath, to: patched, hashes: .byCaller, baseHash: previous.contentHash, flushesOnCommit: false)
        } catch let error as DeltaError where error.path == download.outputPath {
            throw DeltaError(path: "the delta \(delta.url)", reason: error.reason)  // named by its URL, not the file in partial/
        }
        if let expected = region.contentHash, summary.targetHash.uppercased() != expected.uppercased() {
            throw RegionError(
                region: region.id, reason: L.localized("the delta gives tiles with hash %1$s, the catalog declares %2$s", "\(summary.targetHash)", "\(expected)"), kind: .badData)
        }
        let result = compactedIfGrown(patched, region: region, notice: notice)
        // A delta that carries the LtHash of its change had its result checked by the apply, in
        // the time of its changed tiles: no whole-file pass is made (``ContentHash/checkedByDelta(_:tileCount:)``)
        // when the base's tile count is recorded. Another (martin's) is hashed whole, as before.
        let contentHash: ContentHash
        if summary.resultChecked, let base = previous.tileCount, let change = summary.tileCountChange, result == patched {
            contentHash = .checkedByDelta(summary.targetHash, tileCount: base + change)
        } else {
            contentHash = summary.resultChecked ? .declared(summary.targetHash) : .computed(mustBe: summary.targetHash)
        }
        try checkAndInstall(result, contentHash: contentHash, from: "the delta", delta: package.sha256, region: region, stage: stage, authorization: authorization)
        keepDelta(package)
        downloader.discardPartial(package, in: directory)
        return .patched(version: region.version, previous: previous.version, downloaded: delta.size - download.resumedFrom, fullSize: region.size)
    }

    /// The delta's result, or a compact copy of it when it has grown more than an eighth past the
    /// catalog's `installedSize` (the size of the version written whole, which the space checks
    /// count on): a delta's changes split the pages they land in, and a region updated by delta
    /// after delta grew to 1.7× its full install (found by an attack). The copy is written where
    /// a full install's file is assembled (removed with it on a failure or a signal), when the
    /// disk has room for it (about `installedSize`); else, or when it fails, the result is checked
    /// and installed as it is (whole, only larger), and `notice` says so.
    private func compactedIfGrown(_ patched: String, region: CatalogRegion, notice: (String) -> Void) -> String {
        let size = FileManager.default.sizeOfItem(atPath: patched)
        guard size > region.installedSize + region.installedSize / 8 else { return patched }
        let compact = directory.installingPath(region.id)
        try? FileManager.default.removeItem(atPath: compact)
        LeftoverFiles.removeSideFiles(of: compact)
        let reason: String
        if let free = freeSpace(directory.path), free < region.installedSize {
            reason = L.localized("%1$s free, and a compact copy needs about %2$s", ByteCount.text(free), ByteCount.text(region.installedSize))
        } else {
            do {
                try SQLiteDatabase.compactCopy(of: patched, to: compact)
                try FileManager.default.removeItem(atPath: patched)
                return compact
            } catch {
                try? FileManager.default.removeItem(atPath: compact)
                LeftoverFiles.removeSideFiles(of: compact)
                reason = errorMessage(error)
            }
        }
        // A stop removed the files under the compaction: nothing is installed, nothing to say.
        guard !isStopping() else { return patched }
        notice(
            L.localized(
                "region %1$s: updated by the delta to %2$s, more than the %3$s of its full package, and it could not be made compact (%4$s); it works as it is",
                region.id, ByteCount.text(size), ByteCount.text(region.installedSize), reason))
        return patched
    }

    /// The copy of the installed file, and room for the delta's changes (SQLite's journal holds
    /// the pages they replace), beside the downloaded delta: the space checked before the download
    /// knew the unpacked delta's size only as a bound. Said before the copy starts, with the sizes,
    /// instead of a full disk half-way through it.
    private func checkRoomToApply(_ id: String, delta: String) throws {
        guard let free = freeSpace(directory.path) else { return }
        let copy = FileManager.default.sizeOfItem(atPath: directory.regionPath(id))
        let changes = FileManager.default.sizeOfItem(atPath: delta)
        guard free < copy + changes else { return }
        throw RegionError(
            region: id,
            reason: L.localized(
                "not enough free disk space in %1$s to apply the delta: needs %2$s (a copy of the installed file, %3$s, and room for its changes, %4$s), %5$s available",
                directory.path, ByteCount.text(copy + changes), ByteCount.text(copy), ByteCount.text(changes), ByteCount.text(free)),
            kind: .io)
    }

    /// A delta's failure that is not the delta's own (``patch(_:with:previous:catalog:stage:progress:notice:authorization:)``):
    /// `sync` says `error` and fetches no full package in its place.
    struct DeltaNotAtFault: Error {
        let error: any Error
    }

    /// Keeps the delta that updated a region, as downloaded (``DataDirectory/keptDeltaPath(_:sha256:)``),
    /// in place of any kept before: `mapgate mirror` passes it on to machines that have the
    /// version it starts from. Best effort: a delta that cannot be kept is only not mirrored.
    func keepDelta(_ package: PackageReference) {
        let raw = PackageDownloader.partialPath(package, in: directory)
        guard FileManager.default.sizeOfItem(atPath: raw) == package.size else {
            LeftoverFiles.removeKeptDeltas(of: package.id, in: directory)
            return
        }
        LeftoverFiles.keepDelta(raw, id: package.id, sha256: package.sha256, in: directory)
    }
}
