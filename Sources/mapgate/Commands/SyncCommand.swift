import FoundationEssentials
import MapGate
import Synchronization

#if canImport(Glibc)
import Glibc

private typealias L = Localization
#endif

/// `mapgate sync [REGION...]`: install or update regions from the catalog.
struct SyncCommand: Command {
    static let name = "sync"
    static let abstract = L.localized("Install or update map regions from the catalog")
    static let arguments = "[REGION...]"
    static let discussion = L.localized("""
        With region names, installs or updates those regions; without, updates every installed
        region. A region whose installed version equals the catalog's is left alone. Downloads
        resume, are verified by size and SHA-256, are gunzipped while they stream, and replace the
        installed file atomically. A use of the update gate, counted only when a region or style
        is installed, updated or repaired (a run that installs nothing costs none).

        With --from, reads the catalog and packages from a mirror instead (a folder written by
        'mapgate mirror', or the address of a 'mapgate serve --share'), checked exactly as the
        publisher's: signature, serial, expiry, sizes and hashes. Regions the mirror does not
        carry stay as they are.

        With --json, one object per region, the same keys for every outcome: region, action
        ("installed", "updated", "repaired" (a damaged file installed again), "up-to-date", "kept" (no longer offered),
        "absent" (not in the mirror), "failed"), version,
        previousVersion, bytes, resumedFrom, transfer ("full", "delta", or null), error, exitCode.
        """)
    static let options = [
        OptionSpec(name: "from", value: "MIRROR", help: L.localized("sync from a mirror: a folder, or http://HOST:PORT of a 'serve --share'")),
    ]
    let regions: [String]
    let mirror: String?

    init(parsing arguments: ParsedArguments) throws {
        for typed in arguments.positional { try UsageError.requireRegion(typed, usage: Self.usage) }
        regions = arguments.positional
        mirror = arguments.value("from")
    }

    /// The command that resumes this one (found by an attack: the hint said `mapgate sync`, which
    /// without the regions installs nothing when none is installed yet, and without `--from`
    /// goes to the publisher instead of the mirror).
    static func resumeCommand(_ regions: [String], mirror: String?) -> String {
        ShellWord.command(["mapgate", "sync"] + regions + (mirror.map { ["--from", $0] } ?? []))
    }

    func run(_ context: Context) throws -> Int32 {
        // The catalog is read before anything else: an unreachable catalog costs no use. The
        // workflow decides the rest (SyncWorkflow: what costs a use); this renders its events.
        // In system mode the caller's folder arrives as a socket to the caller's process, which
        // opens its files with the caller's rights (PassedFolderHost): the service may not enter a
        // stick the desktop mounted for its user alone (found by an attack). An older client
        // passes the folder itself, which the service reads with its own rights: one only its
        // owner may enter is said as such ("catalog file:///proc/self/fd/3/catalog.json:
        // permission denied" before).
        // The folder is then named by the caller's path in every message, the resume hint and
        // `list` (found by an attack: they said /proc/self/fd/3).
        var passed: PassedFolderSource?
        if mirror == SystemAccess.passedFolder, try context.isSystemService() {
            var info = stat()
            if fstat(3, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
                do {
                    passed = try PassedFolderSource(socket: LocalSocket.adopting(3, name: SystemAccess.passedFolder), answerTimeout: context.passedFolderTimeout)
                } catch {
                    throw GeneralFailure(L.localized("the folder given to --from: its caller did not say which it is (%1$s)", SystemErrorReason.text(error.code)), kind: .io)
                }
                context.localFiles = passed
            }
        }
        if mirror == SystemAccess.passedFolder, passed == nil,
            [("/.", X_OK), ("/" + MirrorLayout.catalogName, R_OK)].contains(where: { access(SystemAccess.passedFolder + $0.0, $0.1) != 0 && errno == EACCES })
        {
            throw GeneralFailure(
                L.localized(
                    "the folder given to --from cannot be read by the map service (user %1$s): let it in (chmod o+x on the folder, o+r on its files), or copy the mirror to a folder it can read",
                    (try? context.gateSettings().systemUser) ?? "_mapgate"), kind: .io)
        }
        let base = try passed.map { MirrorLayout.fileURL($0.folder) } ?? mirror.map { try MirrorLayout.baseURL(from: $0, currentDirectory: FileManager.default.currentDirectoryPath) }
        if let base, MirrorLayout.sendsPasswordInTheClear(base) {
            context.console.warning(
                L.localized("--from %1$s: its password goes over plain HTTP, readable by anyone on the network between; an https:// URL keeps it private", URLCredentials.removed(from: base)))
        }
        let resumeCommand = Self.resumeCommand(regions, mirror: passed?.folder ?? mirror)
        // From a folder (a stick) the packages are copied, not downloaded: the lines say so (found
        // by a review: "downloaded" for a copy from a stick, read by a user with no network).
        let copied = base?.hasPrefix("file://") == true
        let accepted = try context.fetchCatalog(mirror: base)
        let installer = try RegionInstaller(
            directory: context.dataDirectory, state: try context.state(), downloader: PackageDownloader(client: try context.httpClient()))
        installer.isStopping = { SignalRouter.isStopping.load(ordering: .acquiring) }
        let workflow = SyncWorkflow(
            catalog: accepted, savesCatalog: true, library: try context.regionLibrary(), installer: installer)
        let console = context.console
        let killAt = FaultInjection(environment: context.environment)
        let gate = try context.makeGate()
        defer { context.warnAboutState(gate) }
        // A signal from here on says "stopping…", gives back the use if nothing was delivered
        // (InterruptibleUse), then, once files are being assembled, removes them (InterruptCleanup),
        // and last, once that is decided, lets a region whose new file is going into place (its
        // use delivered) be recorded and said before the run stops (found by an attack: Ctrl-C as
        // the file went into place ended the run with 130 and "run again to resume" alone, the
        // region installed and its use counted). Cleanups run newest first: registered in the
        // opposite order.
        let installing = InstallUnderWay()
        let finishing = SignalRouter.onSignal { _ in installing.waitIfDelivered(within: .seconds(10)) }
        defer { withExtendedLifetime(finishing) {} }
        // After the give-back, so that the file of an install whose use was delivered is left for
        // the run to put in place (found by an attack: removed first, a rename that stalled past
        // the give-back's patience left the use counted and nothing installed).
        let cleanup = InterruptCleanup(console: console, keeping: { installing.holdsDeliveredInstall })
        let interruptible = InterruptibleUse(context)
        installing.use = interruptible
        var bars: [String: ProgressBar] = [:]
        var stylesRejected = 0
        defer { installing.mark(false) }
        let summary = try workflow.run(
            requested: regions, gate: gate, lock: { try context.lockDataDirectory() },
            reserving: interruptible.reserving,
            confirm: { try GateGuard.confirm($0, context: context) },
            progress: { region, received, total in
                killAt.reachedBytes(received)
                bars[region.id]?.update(received, of: total)
            }
        ) { event in
            switch event {
            case .willInstall(let files):
                cleanup.remove(files, hint: L.localized("run '%1$s' again to resume: what was downloaded is kept", resumeCommand))
            case .started(let region):
                if ProgressBar.isWanted(console) { bars[region.id] = ProgressBar(label: region.id, console: console) }
            case .stage(_, let stage):
                // From here to the region's line, a signal that finds the use delivered waits for it.
                if stage == .installing { installing.mark(true) }
                killAt.reached(stage.rawValue)
            case .synced(let region, _):
                bars.removeValue(forKey: region.id)?.finish()
            case .failed(let id?, _, _):
                bars.removeValue(forKey: id)?.finish()
            case .styleRejected:
                // As `catalog` does: the first few, then how many more.
                stylesRejected += 1
                if stylesRejected > CatalogCommand.rejectionsShown { return }
            default:
                break
            }
            render(event, context: context, copied: copied)
            switch event {
            case .synced, .failed: installing.mark(false)
            default: break
            }
        }
        withExtendedLifetime((cleanup, interruptible)) {}
        if stylesRejected > CatalogCommand.rejectionsShown {
            console.warning(L.localized("%1$s more style entries rejected; 'mapgate catalog --json' lists them all", "\(stylesRejected - CatalogCommand.rejectionsShown)"))
        }
        if summary.nothingToDo, !context.json {
            if mirror != nil {
                let held = accepted.catalog.regions.map(\.id)
                console.print(
                    L.localized("No region is installed yet: name the regions to install from the mirror (it has: %1$s).", "\(held.isEmpty ? "none" : held.joined(separator: ", "))"))
            } else {
                console.print(L.localized("No region is installed yet: name the regions to install (see 'mapgate catalog')."))
            }
        }
        if summary.choseUpdate { return ExitCode.success }
        return summary.firstFailure.map { ExitCode.forError($0) } ?? ExitCode.success
    }

    /// - Parameter copied: the packages come from a folder (`--from DIR`): "copied", not "downloaded".
    private func render(_ event: SyncWorkflow.Event, context: Context, copied: Bool) {
        switch event {
        case .kept(let id, let version):
            report(SyncLine(region: id, action: "kept", version: version), context: context) {
                L.format(L.localized("%1$s %2$s: no longer in the catalog; the installed version stays"), id, TerminalText.inline(version))
            }
        case .absent(let id, let version, let reason):
            report(SyncLine(region: id, action: "absent", version: version), context: context) {
                L.format(L.localized("%1$s %2$s: %3$s; the installed version stays"), id, TerminalText.inline(version), TerminalText.inline(reason))
            }
        case .upToDate(let region, let version):
            report(.upToDate(version: version), region: region, context: context, copied: copied)
        case .synced(let region, let outcome):
            report(outcome, region: region, context: context, copied: copied)
        case .failed(let region, let version, let error):
            reportFailure(error, region: region, version: version, context: context)
        case .notice(let text):
            context.console.warning(text)
        case .styleRejected(let rejection):
            context.console.warning(MapGateCLI.describe(rejection))
        case .styleSynced(let style, let outcome):
            report(outcome, style: style, context: context, copied: copied)
        case .styleFailed(let style, let error):
            reportFailure(error, context: context) { StyleLine(style: style.id, action: "failed", version: style.version, error: $0, exitCode: $1) }
        case .willInstall, .started, .stage:
            break
        }
    }

    /// One style's line of `sync --json`.
    struct StyleLine: Encodable {
        var style: String
        var action: String
        var version: String
        var previousVersion: String? = nil
        var bytes: Int64 = 0
        var error: String? = nil
        var exitCode: Int32? = nil

    }

    private func report(_ outcome: StyleInstaller.Outcome, style: CatalogStyle, context: Context, copied: Bool) {
        switch outcome {
        case .upToDate(let version):
            if context.json {
                context.console.json(StyleLine(style: style.id, action: "up-to-date", version: version))
            } else {
                context.console.print(L.localized("style %1$s %2$s: up to date", "\(style.id)", "\(version)"))
            }
        case .installed(let version, let previous, let downloaded):
            // A damaged installed style reads as none (StyleInstaller.installed): never the same version.
            if context.json {
                context.console.json(
                    StyleLine(style: style.id, action: previous == nil ? "installed" : "updated", version: version, previousVersion: previous, bytes: downloaded))
            } else {
                // Whole sentences, each translated (found by an attack: "installed" and "updated
                // from" were English inside the translated line).
                let bytes = Format.bytes(downloaded)
                if let previous {
                    context.console.print(
                        copied
                            ? L.localized("style %1$s %2$s: updated from %3$s (%4$s copied)", "\(style.id)", "\(version)", "\(previous)", "\(bytes)")
                            : L.localized("style %1$s %2$s: updated from %3$s (%4$s downloaded)", "\(style.id)", "\(version)", "\(previous)", "\(bytes)"))
                } else {
                    context.console.print(
                        copied
                            ? L.localized("style %1$s %2$s: installed (%3$s copied)", "\(style.id)", "\(version)", "\(bytes)")
                            : L.localized("style %1$s %2$s: installed (%3$s downloaded)", "\(style.id)", "\(version)", "\(bytes)"))
                }
            }
        }
    }

    /// One region's line of `sync --json`: the same keys for every outcome (docs/commands.md: "JSON output").
    struct SyncLine: Encodable {
        var region: String?
        var action: String
        var version: String?
        var previousVersion: String? = nil
        var bytes: Int64 = 0
        var resumedFrom: Int64 = 0
        var transfer: String? = nil
        var error: String? = nil
        var exitCode: Int32? = nil

    }

    private func reportFailure(_ error: any Error, region: String?, version: String?, context: Context) {
        reportFailure(error, context: context) { SyncLine(region: region, action: "failed", version: version, error: $0, exitCode: $1) }
    }

    /// A failure: its message on stderr, or with --json the line `line` makes of the message and the exit code.
    private func reportFailure(_ error: any Error, context: Context, line: (String, Int32) -> some Encodable) {
        // A failure a signal made while it stops the run is that stop, which is said.
        guard !SignalRouter.isStopping.load(ordering: .acquiring) else { return }
        let message = MapGateCLI.describe(error)
        if context.json {
            context.console.json(line(message, ExitCode.forError(error)))
        } else {
            context.console.error(message)
        }
    }

    private func report(_ line: SyncLine, context: Context, human: () -> String) {
        if context.json {
            context.console.json(line)
        } else {
            context.console.print(human())
        }
    }

    private func report(_ outcome: RegionInstaller.Outcome, region: CatalogRegion, context: Context, copied: Bool) {
        switch outcome {
        case .upToDate(let version):
            report(SyncLine(region: region.id, action: "up-to-date", version: version, previousVersion: version), context: context) {
                L.format(L.localized("%1$s %2$s: up to date"), region.id, TerminalText.inline(version))
            }
        case .patched(let version, let previous, let downloaded, let fullSize):
            let line = SyncLine(
                region: region.id, action: "updated", version: version, previousVersion: previous, bytes: downloaded, transfer: "delta")
            report(line, context: context) {
                L.format(
                    L.localized("%1$s %2$s → %3$s: updated (delta, %4$s of %5$s)"), region.id, TerminalText.inline(previous), TerminalText.inline(version),
                    Format.bytes(downloaded), Format.bytes(fullSize))
            }
        case .installed(let version, let previous, let downloaded, let resumedFrom):
            let line = SyncLine(
                region: region.id, action: previous == nil ? "installed" : "updated", version: version, previousVersion: previous,
                bytes: downloaded, resumedFrom: resumedFrom, transfer: "full")
            report(line, context: context) {
                let (id, shown, bytes, at) = (region.id, TerminalText.inline(version), Format.bytes(downloaded), Format.bytes(resumedFrom))
                switch (previous.map(TerminalText.inline), resumedFrom > 0, copied) {
                case (let previous?, true, false):
                    return L.format(L.localized("%1$s %2$s: updated from %3$s (%4$s downloaded, resumed at %5$s)"), id, shown, previous, bytes, at)
                case (let previous?, true, true):
                    return L.format(L.localized("%1$s %2$s: updated from %3$s (%4$s copied, resumed at %5$s)"), id, shown, previous, bytes, at)
                case (let previous?, false, false):
                    return L.format(L.localized("%1$s %2$s: updated from %3$s (%4$s downloaded)"), id, shown, previous, bytes)
                case (let previous?, false, true):
                    return L.format(L.localized("%1$s %2$s: updated from %3$s (%4$s copied)"), id, shown, previous, bytes)
                case (nil, true, false):
                    return L.format(L.localized("%1$s %2$s: installed (%3$s downloaded, resumed at %4$s)"), id, shown, bytes, at)
                case (nil, true, true):
                    return L.format(L.localized("%1$s %2$s: installed (%3$s copied, resumed at %4$s)"), id, shown, bytes, at)
                case (nil, false, false):
                    return L.format(L.localized("%1$s %2$s: installed (%3$s downloaded)"), id, shown, bytes)
                case (nil, false, true):
                    return L.format(L.localized("%1$s %2$s: installed (%3$s copied)"), id, shown, bytes)
                }
            }
        case .repaired(let version, let downloaded, let resumedFrom):
            // The installed file of this version was damaged (said on stderr) and is installed again.
            let line = SyncLine(region: region.id, action: "repaired", version: version, bytes: downloaded, resumedFrom: resumedFrom, transfer: "full")
            report(line, context: context) {
                let (id, shown, bytes, at) = (region.id, TerminalText.inline(version), Format.bytes(downloaded), Format.bytes(resumedFrom))
                switch (resumedFrom > 0, copied) {
                case (true, false):
                    return L.format(L.localized("%1$s %2$s: repaired (installed again, %3$s downloaded, resumed at %4$s)"), id, shown, bytes, at)
                case (true, true):
                    return L.format(L.localized("%1$s %2$s: repaired (installed again, %3$s copied, resumed at %4$s)"), id, shown, bytes, at)
                case (false, false):
                    return L.format(L.localized("%1$s %2$s: repaired (installed again, %3$s downloaded)"), id, shown, bytes)
                case (false, true):
                    return L.format(L.localized("%1$s %2$s: repaired (installed again, %3$s copied)"), id, shown, bytes)
                }
            }
        }
    }
}

/// Whether a region's install is under way in a `sync`: from its `installing` stage to its line
/// (``SyncCommand``), which a signal waits for once the use is delivered.
private final class InstallUnderWay: Sendable {
    private let underWay = Atomic<Bool>(false)
    private let held = Locked<InterruptibleUse?>(nil)
    /// The run's use, whose delivery decides whether a signal waits.
    var use: InterruptibleUse? {
        get { held.withLock { $0 } }
        set { held.withLock { $0 = newValue } }
    }

    func mark(_ value: Bool) { underWay.store(value, ordering: .releasing) }

    /// Whether an install is under way whose use the gate's record was told of: its new file is
    /// going into place.
    var holdsDeliveredInstall: Bool { underWay.load(ordering: .acquiring) && use?.isTold == true }

    /// Waits while an install is under way, if the gate's record was told of the run's use (its
    /// new file going into place, or in place: a rename that stalls is waited for too).
    func waitIfDelivered(within limit: Duration) {
        guard use?.isTold == true else { return }
        let deadline = ContinuousClock.now + limit
        while underWay.load(ordering: .acquiring), ContinuousClock.now < deadline { usleep(5_000) }
    }
}
