import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// `mapgate sync [REGION...]`: install or update regions from the catalog.
struct SyncCommand: Command {
    static let name = "sync"
    static let abstract = "Install or update map regions from the catalog"
    static let arguments = "[REGION...]"
    static let discussion = """
        With region names, installs or updates those regions; without, updates every installed
        region. A region whose installed version equals the catalog's is left alone. Downloads
        resume, are verified by size and SHA-256, are gunzipped while they stream, and replace the
        installed file atomically. A use of the update gate.
        With --json, one object per region, the same keys for every outcome: region, action
        ("installed", "updated", "repaired" (a damaged file installed again), "up-to-date", "kept" (no longer offered), "failed"), version,
        previousVersion, bytes, resumedFrom, transfer ("full", "delta", or null), error, exitCode.
        """
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        for id in arguments.positional {
            if let problem = Catalog.regionIDProblem(id) { throw UsageError(message: "not a region id: \(problem)", usage: Self.usage) }
        }
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        // The catalog is read, the regions resolved and checked and the data directory locked
        // before the gate counts a use: an unreachable catalog, a typo or nothing to do costs none.
        let catalog = try context.fetchCatalog().catalog
        let library = try context.regionLibrary()
        let console = context.console
        let plan = try SyncPlan(requested: regions, installed: try library.installed().map(\.id), catalog: catalog)
        if plan.isEmpty {
            if !context.json { console.print("No region is installed yet: name the regions to install (see 'mapgate catalog').") }
            return ExitCode.success
        }
        for id in plan.kept {
            let version = try library.region(id).version
            report(SyncLine(region: id, action: "kept", version: version), context: context) {
                "\(id) \(TerminalText.inline(version)): no longer in the catalog; the installed version stays"
            }
        }
        var firstFailure: (any Error)?
        for rejection in plan.refused {
            firstFailure = firstFailure ?? rejection
            reportFailure(rejection, region: rejection.region ?? "?", version: "", context: context)
        }
        // What can be decided without the gate is decided first: a region that is up to date,
        // needs a newer app or whose package is not there (404) costs no use.
        try GateGuard.refuseIfClosed(context)
        let lock = try context.lockDataDirectory()
        let installer = try RegionInstaller(
            directory: context.dataDirectory, state: try context.state(), downloader: PackageDownloader(client: try context.httpClient()))
        var pending: [CatalogRegion] = []
        for region in plan.targets {
            do {
                if let outcome = try installer.precheck(region, from: catalog, lock: lock) {
                    report(outcome, region: region, context: context)
                } else {
                    pending.append(region)
                }
            } catch {
                firstFailure = firstFailure ?? error
                reportFailure(error, region: region.id, version: region.version, context: context)
            }
        }
        // The publisher's styles follow the regions they draw: due when those are all installed
        // (or about to be) and the installed style is not the catalog's version.
        let styles = StyleInstaller(directory: context.dataDirectory, downloader: installer.downloader)
        let installedAfter = Set(try library.installed().map(\.id)).union(pending.map(\.id))
        let stylesDue = StyleInstaller.styles(in: catalog, drawing: installedAfter).filter { !styles.isUpToDate($0) }
        for rejection in catalog.rejectedStyles { console.warning(MapGateCLI.describe(rejection)) }
        guard !pending.isEmpty || !stylesDue.isEmpty else { return firstFailure.map { ExitCode.forError($0) } ?? ExitCode.success }
        guard let authorization = try GateGuard.authorize(context, installing: pending.map(\.id)) else { return ExitCode.success }

        let killAt = FaultInjection(environment: context.environment)
        let cleanup = InterruptCleanup(
            removing: pending.flatMap { [context.dataDirectory.installingPath($0.id), context.dataDirectory.patchingPath($0.id)] }
                + stylesDue.map { context.dataDirectory.installingPath($0.package.id) },
            console: console)
        defer { withExtendedLifetime(cleanup) {} }
        for region in pending {
            let bar = ProgressBar.isWanted(console) ? ProgressBar(label: region.id, console: console) : nil
            do {
                let outcome = try installer.sync(
                    region, from: catalog, authorization: authorization, lock: lock,
                    stage: { killAt.reached($0.rawValue) },
                    progress: { received, total in
                        killAt.reachedBytes(received)
                        bar?.update(received, of: total)
                    },
                    notice: { console.warning($0) })
                bar?.finish()
                report(outcome, region: region, context: context)
            } catch {
                bar?.finish()
                firstFailure = firstFailure ?? error
                reportFailure(error, region: region.id, version: region.version, context: context)
            }
        }
        let installed = Set(try library.installed().map(\.id))
        for style in StyleInstaller.styles(in: catalog, drawing: installed) where stylesDue.contains(style) {
            do {
                let outcome = try styles.sync(style, from: catalog, authorization: authorization, lock: lock)
                report(outcome, style: style, context: context)
            } catch {
                firstFailure = firstFailure ?? error
                reportFailure(error, context: context) { StyleLine(style: style.id, action: "failed", version: style.version, error: $0, exitCode: $1) }
            }
        }
        return firstFailure.map { ExitCode.forError($0) } ?? ExitCode.success
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

    private func report(_ outcome: StyleInstaller.Outcome, style: CatalogStyle, context: Context) {
        switch outcome {
        case .upToDate(let version):
            if context.json {
                context.console.json(StyleLine(style: style.id, action: "up-to-date", version: version))
            } else {
                context.console.print("style \(style.id) \(version): up to date")
            }
        case .installed(let version, let previous, let downloaded):
            // A damaged installed style reads as none (StyleInstaller.installed): never the same version.
            if context.json {
                context.console.json(
                    StyleLine(style: style.id, action: previous == nil ? "installed" : "updated", version: version, previousVersion: previous, bytes: downloaded))
            } else {
                let what = previous.map { "updated from \($0)" } ?? "installed"
                context.console.print("style \(style.id) \(version): \(what) (\(Format.bytes(downloaded)) downloaded)")
            }
        }
    }

    /// One region's line of `sync --json`: the same keys for every outcome (docs/commands.md: "JSON output").
    struct SyncLine: Encodable {
        var region: String
        var action: String
        var version: String
        var previousVersion: String? = nil
        var bytes: Int64 = 0
        var resumedFrom: Int64 = 0
        var transfer: String? = nil
        var error: String? = nil
        var exitCode: Int32? = nil

    }

    private func reportFailure(_ error: any Error, region: String, version: String, context: Context) {
        reportFailure(error, context: context) { SyncLine(region: region, action: "failed", version: version, error: $0, exitCode: $1) }
    }

    /// A failure: its message on stderr, or with --json the line `line` makes of the message and the exit code.
    private func reportFailure(_ error: any Error, context: Context, line: (String, Int32) -> some Encodable) {
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

    private func report(_ outcome: RegionInstaller.Outcome, region: CatalogRegion, context: Context) {
        switch outcome {
        case .upToDate(let version):
            report(SyncLine(region: region.id, action: "up-to-date", version: version), context: context) {
                "\(region.id) \(TerminalText.inline(version)): up to date"
            }
        case .patched(let version, let previous, let downloaded, let fullSize):
            let line = SyncLine(
                region: region.id, action: "updated", version: version, previousVersion: previous, bytes: downloaded, transfer: "delta")
            report(line, context: context) {
                "\(region.id) \(TerminalText.inline(previous)) → \(TerminalText.inline(version)): updated (delta, \(Format.bytes(downloaded)) of \(Format.bytes(fullSize)))"
            }
        case .installed(let version, let previous, let downloaded, let resumedFrom):
            // The same version again: the installed file was damaged (said on stderr) and is repaired.
            let isRepair = previous == version
            let line = SyncLine(
                region: region.id, action: isRepair ? "repaired" : previous == nil ? "installed" : "updated", version: version,
                previousVersion: isRepair ? nil : previous, bytes: downloaded, resumedFrom: resumedFrom, transfer: "full")
            report(line, context: context) {
                let what = isRepair ? "repaired (installed again)" : previous.map { "updated from \(TerminalText.inline($0))" } ?? "installed"
                let resumed = resumedFrom > 0 ? ", resumed at \(Format.bytes(resumedFrom))" : ""
                return "\(region.id) \(TerminalText.inline(version)): \(what) (\(Format.bytes(downloaded)) downloaded\(resumed))"
            }
        }
    }
}
