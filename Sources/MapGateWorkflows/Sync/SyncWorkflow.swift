import FoundationEssentials
import MapGateBase
import MapGateTrust

/// `sync` as one use case: owns the order of its steps and reports each outcome as an ``Event``;
/// the command only renders them.
///
/// The order: plan (which regions; a typo throws before anything else), refuse if the gate is
/// closed, lock the data directory, check each region without the gate (up to date, needs a newer
/// app, package missing: none costs a use), find the styles due, then one use of the gate for
/// the installs. The use is counted only when delivered: a region or style installed, updated or
/// repaired (``Gate/use(opening:installing:confirm:_:)``); a run whose every install failed (the
/// publisher's 404, a cut or stalled download, a bad hash, a full disk) gives it back.
public final class SyncWorkflow {
    /// What one step of the run came to, in the order they happen.
    public enum Event {
        /// An installed region the catalog no longer offers: it stays as it is.
        case kept(region: String, version: String)
        /// An installed region the place the catalog was read from does not carry (a mirror
        /// with only some regions): it stays as it is.
        case absent(region: String, version: String, reason: String)
        /// A region that needs no work (decided before the gate).
        case upToDate(CatalogRegion, version: String)
        /// The files a run interrupted now would leave half-written (removed on Ctrl-C).
        case willInstall(temporaryFiles: [String])
        /// One region's install starts (a progress bar's label).
        case started(CatalogRegion)
        /// A stage of the region's install starts.
        case stage(CatalogRegion, RegionInstaller.Stage)
        /// Something the user should know that is not a failure (a delta that could not be used).
        case notice(String)
        /// A region installed, updated, patched or repaired.
        case synced(CatalogRegion, RegionInstaller.Outcome)
        /// A region that failed: its id (nil for a refused entry that has none), the catalog's
        /// version (nil when its entry was refused or is missing) and why.
        case failed(region: String?, version: String?, error: any Error)
        /// A style entry of the catalog that was refused (it is not installed).
        case styleRejected(CatalogError)
        /// A style installed, updated or up to date.
        case styleSynced(CatalogStyle, StyleInstaller.Outcome)
        case styleFailed(CatalogStyle, error: any Error)
    }

    /// What the run came to as a whole.
    public struct Summary {
        /// Nothing asked and nothing installed: there was nothing to do.
        public var nothingToDo = false
        /// The user chose "update now" at the prompt: nothing was installed.
        public var choseUpdate = false
        /// The first failure, which sets the exit code; nil when every step went well.
        public var firstFailure: (any Error)?
    }

    private let catalog: Catalog
    /// A newer catalog of another key was accepted before: this one only fills in what is not installed.
    private let newer: AcceptedCatalog.NewerCatalog?
    private let saved: SavedCatalog?
    private let library: RegionLibrary
    private let installer: RegionInstaller
    private let styles: StyleInstaller

    /// - Parameters:
    ///   - catalog: the catalog the gate accepted (``Gate/accept(_:)``): no run skips its checks
    ///     (rollback, expiry, the publisher's rules).
    ///   - savesCatalog: save the catalog as fetched and verified in the data directory once the
    ///     run holds its lock (what `mapgate mirror` passes on and `catalog --saved` shows).
    public init(catalog: AcceptedCatalog, savesCatalog: Bool = false, library: RegionLibrary, installer: RegionInstaller) {
        self.catalog = catalog.catalog
        newer = catalog.newerAccepted
        // An older catalog is not what `mirror` should pass on, nor what `catalog --saved` shows.
        saved = savesCatalog && newer == nil ? SavedCatalog(bytes: catalog.fetched.bytes, signature: catalog.fetched.signatureFile) : nil
        self.library = library
        self.installer = installer
        styles = StyleInstaller(directory: library.directory, downloader: installer.downloader)
    }

    /// Runs the sync of `requested` (empty: every installed region).
    ///
    /// - Parameters:
    ///   - gate: the version gate; one use is asked of it when something is to be installed.
    ///   - lock: takes the data-directory lock (after the checks that need none).
    ///   - reserving: runs the gate's reservation of the use (``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``).
    ///   - confirm: shown the authorization (the prompt); false when the user chose to update now,
    ///     an error when the prompt got no answer (nothing runs, nothing is counted).
    ///   - progress: bytes received of a region's download (from the download's thread).
    ///   - onEvent: each step's outcome, on the caller's thread.
    public func run(
        requested: [String], gate: Gate, lock: () throws -> DirectoryLock,
        reserving: (() throws -> GateAuthorization) throws -> GateAuthorization = { try $0() },
        confirm: (GateAuthorization) throws -> Bool = { _ in true },
        progress: @escaping (CatalogRegion, Int64, Int64) -> Void = { _, _, _ in }, onEvent: (Event) -> Void
    ) throws -> Summary {
        var summary = Summary()
        func fail(_ error: any Error, _ event: Event) {
            summary.firstFailure = summary.firstFailure ?? error
            onEvent(event)
        }
        let installed = try library.installed()
        var plan = try SyncPlan(requested: requested, installed: installed.map(\.id), catalog: catalog)
        if let newer {
            let date = LocalTime.text(newer.generated)
            onEvent(.notice(L.localized(
                "this catalog was published before one already accepted from key %1$s (serial %2$s, published %3$s): it changes nothing installed, and is not kept for 'mapgate mirror'",
                newer.keyID, "\(newer.serial)", date)))
            plan.holdBack(
                installed: Dictionary(installed.map { ($0.id, $0.version) }, uniquingKeysWith: { first, _ in first }),
                reason: L.localized("its catalog here is older than one already accepted (published %1$s)", date))
        }
        if plan.isEmpty {
            summary.nothingToDo = true
            return summary
        }
        for id in plan.kept { onEvent(.kept(region: id, version: try library.region(id).version)) }
        for absent in plan.absent {
            onEvent(.absent(region: absent.id, version: try library.region(absent.id).version, reason: absent.reason))
        }
        for rejection in plan.refused { fail(rejection, .failed(region: rejection.region, version: nil, error: rejection)) }
        for missing in plan.unavailable {
            let error = RegionError(region: missing.id, reason: missing.reason, kind: .unavailable)
            fail(error, .failed(region: missing.id, version: nil, error: error))
        }

        try gate.refuseIfClosed()
        let lock = try lock()
        // What killed runs left (`.catalog.json.PID.tmp`, `.dat.nosync*`), now that none runs here.
        for folder in [library.directory.path, library.directory.partialPath, library.directory.regionsPath, library.directory.stylesPath] {
            AtomicFile.removeLeftovers(in: folder)
        }
        // Records a killed run did not save for files it did put in place (issue 40, item 4), and
        // files it had paid for and not yet put in place. Each use a pending record names pays
        // for one install, once: the gate's last delivered uses are read as the named ones are
        // taken out, in one transaction under the data directory's lock, before anything is
        // finished (and nothing is while the record cannot be written), and one use finishes one
        // install. Found by a review and two attacks: the record and its file copied aside and
        // put back after a `remove` were finished again (with the record held locked, too), by a
        // run that had read the list before waiting for the lock, and beside another record of
        // the same killed run, all without a use.
        //
        // The regions a run's use paid for and did not install (``UnfinishedRun``) are that use's
        // to finish too: a pending record it names is finished only for one of them, and the use
        // stays among the last delivered while any is left, renewed under a new name.
        let found = UnfinishedRun.entry(in: library.directory)
        let payers = library.pendingPayers(lock: lock)
        let keep = Set([found?.paidBy, found?.previous?.paidBy].compactMap { $0 })
        let paid = payers.isEmpty && found == nil ? [] : try gate.retireDeliveries(payers.subtracting(keep))
        var (unfinished, superseded) = UnfinishedRun.holding(found, paid: paid)
        if let superseded { try gate.retireDeliveries([superseded]) }
        var finishedBy: Set<String> = []
        try library.finishPendingInstalls(lock: lock) { entry in
            guard let payer = entry.paidBy, !finishedBy.contains(payer) else { return }
            if payer == unfinished?.paidBy {
                guard unfinished?.regions.contains(where: { $0.id == entry.record.id }) == true, installer.finishPaidInstall(entry, paid: paid, catalog: catalog) else { return }
                unfinished?.regions.removeAll { $0.id == entry.record.id }
            } else if installer.finishPaidInstall(entry, paid: paid, catalog: catalog) {
                finishedBy.insert(payer)
            }
        }
        unfinished = try renewed(unfinished, paid: paid, gate: gate)
        if let saved {
            do {
                try saved.save(in: library.directory, lock: lock)
            } catch {
                onEvent(.notice(L.localized("the catalog could not be saved for 'mapgate mirror': %1$s", errorMessage(error))))
            }
        }
        // Regions whose record went with a damaged state database, their files the catalog's
        // version: recorded again, not fetched (``RegionInstaller/takeBackLostRecord(of:installedUnderGate:)``).
        let lostRecords = try plan.targets.filter { !(try library.hasRecord($0.id)) && FileManager.default.fileExists(atPath: library.directory.regionPath($0.id)) }
        if !lostRecords.isEmpty {
            let underGate = Set(try gate.status().record.installedRegions)
            for region in lostRecords where installer.takeBackLostRecord(of: region, installedUnderGate: underGate) {
                onEvent(.notice(L.localized("region %1$s: its record was lost with a damaged state database; the installed file is version %2$s, checked, and was recorded again", region.id, region.version)))
            }
        }
        var pending: [CatalogRegion] = []
        // Regions asked for that failed before the use (their package unreachable, refused): a
        // use this run pays covers them too (found by an attack: a package that answered 404
        // here was paid for again once the publisher fixed it).
        var failedEarly: [UnfinishedRun.Region] = []
        for region in plan.targets {
            do {
                if case .upToDate(let version)? = try installer.precheck(region, from: catalog, lock: lock) {
                    unfinished?.regions.removeAll { $0.id == region.id }
                    onEvent(.upToDate(region, version: version))
                } else {
                    pending.append(region)
                }
            } catch {
                failedEarly.append(UnfinishedRun.Region(id: region.id, version: region.version))
                fail(error, .failed(region: region.id, version: region.version, error: error))
            }
        }
        if let entry = unfinished {
            UnfinishedRun.save(entry, in: library.directory)
            // Found up to date, every one: the earlier use has nothing left to pay for (found by
            // an attack: a copy taken of the file while this run read it still paid later).
            if entry.regions.isEmpty {
                try gate.retireDeliveries([entry.paidBy])
                unfinished = nil
            }
        }
        // The publisher's styles follow the regions they draw: due when those are all installed
        // (or about to be) and the installed style is not the catalog's version.
        let installedAfter = Set(try library.installed().map(\.id)).union(pending.map(\.id))
        let stylesDue = StyleInstaller.styles(in: catalog, drawing: installedAfter).filter {
            newer == nil ? !styles.isUpToDate($0) : styles.installed($0.id) == nil
        }
        for rejection in catalog.rejectedStyles { onEvent(.styleRejected(rejection)) }
        guard !pending.isEmpty || !stylesDue.isEmpty else { return summary }

        let directory = library.directory
        // With their side files: SQLite's journal of a file being written (a compact copy's;
        // found by an attack: a signal during it left `<id>.installing.mbtiles-journal`).
        let assembled = pending.flatMap { [directory.installingPath($0.id), directory.patchingPath($0.id)] } + stylesDue.map { directory.installingPath($0.package.id) }
        onEvent(.willInstall(temporaryFiles: assembled.flatMap { path in [path] + LeftoverFiles.sideSuffixes.map { path + $0 } }))
        // Only regions an earlier run paid for, at the versions it paid for: that run's use pays.
        let earlier = unfinished.flatMap { entry in !pending.isEmpty && pending.allSatisfy(entry.covers) ? entry.paidBy : nil }
        if earlier != nil {
            onEvent(.notice(L.localized("finishing what an earlier run paid for and did not install: no use counted")))
        }
        let ran: Void? = try gate.use(installing: pending.map(\.id), paidBy: earlier, reserving: reserving, confirm: confirm) { authorization in
            // What this run's use pays for, until it is installed (``UnfinishedRun``): saved
            // before the first install with the earlier run's entry as the one that holds until
            // this use is delivered, and after each install, so that a signal or a kill at any
            // point leaves paid for what was.
            let payment = authorization.paidByEarlier ?? (authorization.countedPrompt ? authorization.reservationID : nil)
            let own = pending.map { UnfinishedRun.Region(id: $0.id, version: $0.version) } + (earlier == nil ? failedEarly : [])
            var owed = payment.map { payment in
                UnfinishedRun.Entry(
                    paidBy: payment, regions: (unfinished?.regions ?? []) + own.filter { region in !(unfinished?.regions ?? []).contains { $0.id == region.id } },
                    previous: earlier == nil ? unfinished.map { UnfinishedRun.Earlier(paidBy: $0.paidBy, regions: $0.regions) } : nil)
            }
            if let owed { UnfinishedRun.save(owed, in: directory) }
            for region in pending {
                onEvent(.started(region))
                do {
                    let outcome = try installer.sync(
                        region, from: catalog, authorization: authorization, lock: lock,
                        stage: { onEvent(.stage(region, $0)) }, progress: { progress(region, $0, $1) }, notice: { onEvent(.notice($0)) })
                    if var entry = owed {
                        // Delivered: the earlier run's entry is this use's now.
                        if let previous = entry.previous {
                            try? gate.retireDeliveries([previous.paidBy])
                            entry.previous = nil
                        }
                        entry.regions.removeAll { $0.id == region.id }
                        UnfinishedRun.save(entry, in: directory)
                        owed = entry
                    }
                    onEvent(.synced(region, outcome))
                } catch {
                    fail(error, .failed(region: region.id, version: region.version, error: error))
                }
            }
            // A use that delivered nothing was given back: the earlier run's entry holds, as it was.
            if earlier == nil, owed != nil, !authorization.isDelivered {
                if let unfinished { UnfinishedRun.save(unfinished, in: directory) } else { UnfinishedRun.remove(in: directory) }
                owed = nil
            }
            let installed = Set(try library.installed().map(\.id))
            for style in StyleInstaller.styles(in: catalog, drawing: installed) where stylesDue.contains(style) {
                do {
                    onEvent(.styleSynced(style, try styles.sync(style, from: catalog, authorization: authorization, lock: lock)))
                } catch {
                    fail(error, .styleFailed(style, error: error))
                }
            }
            // A run that ends with every install in place and recorded leaves nothing for its use
            // to finish: it leaves the last delivered (found by an attack: a pending record copied
            // while the run stood at its delivery, put back with the installed file after a
            // `remove`, was finished as paid). Best effort: at worst it stays, as it was.
            let done = owed.map { $0.regions.isEmpty } ?? (earlier == nil)
            if let id = payment, done, authorization.isDelivered || earlier != nil, !library.pendingPayers(lock: lock).contains(id) {
                try? gate.retireDeliveries([id])
            }
        }
        if ran == nil { summary.choseUpdate = true }
        return summary
    }

    /// The earlier run's unpaid-for regions under a renewed name of its use (``Gate/renewDelivery(_:)``),
    /// saved; nil (and the file gone) when none is left or its use is no longer among the last
    /// delivered (`paid`, read before this run's retirements).
    private func renewed(_ unfinished: UnfinishedRun.Entry?, paid: [String], gate: Gate) throws -> UnfinishedRun.Entry? {
        guard var entry = unfinished else { return nil }
        let catalogued = Set(catalog.regions.map(\.id))
        entry.regions.removeAll { !catalogued.contains($0.id) }
        guard paid.contains(entry.paidBy), !entry.regions.isEmpty, let renewed = try gate.renewDelivery(entry.paidBy) else {
            if paid.contains(entry.paidBy) { try gate.retireDeliveries([entry.paidBy]) }
            UnfinishedRun.remove(in: library.directory)
            return nil
        }
        entry.paidBy = renewed
        UnfinishedRun.save(entry, in: library.directory)
        return entry
    }
}
