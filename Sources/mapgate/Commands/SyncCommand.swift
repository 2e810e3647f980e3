import Foundation
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
        With --json, one object per region: region, action ("installed", "updated", "up-to-date",
        "failed"), version, previousVersion, bytes, resumedFrom, error.
        """
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        for id in arguments.positional where !Catalog.isValidRegionID(id) {
            throw UsageError(message: "'\(id)' is not a region id ([a-z0-9][a-z0-9._-]{0,63})", usage: Self.usage)
        }
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        // The catalog is read, the regions resolved and the data directory locked before the gate
        // counts a use: an unreachable catalog, a typo or nothing to do costs none.
        let catalog = try context.fetchCatalog().catalog
        let library = try context.regionLibrary()
        let console = context.console

        var targets = regions
        if targets.isEmpty {
            let installed = try library.installed().map(\.id)
            if installed.isEmpty {
                console.print("No region is installed yet: name the regions to install (see 'mapgate catalog').")
                return ExitCode.success
            }
            // An installed region the publisher no longer offers stays as it is.
            for id in installed where catalog.region(id) == nil {
                console.note("\(id): no longer in the catalog; the installed version stays")
            }
            targets = installed.filter { catalog.region($0) != nil }
        }
        let offered = catalog.regions.map(\.id)
        for id in targets where catalog.region(id) == nil {
            throw RegionError(region: id, reason: "not in the catalog (offered: \(offered.joined(separator: ", ")))", kind: .failure)
        }
        let lock = try context.lockDataDirectory()
        guard let authorization = try GateGuard.authorize(context) else { return ExitCode.success }

        let installer = try RegionInstaller(
            directory: context.dataDirectory, state: try context.state(), downloader: PackageDownloader(client: try context.httpClient()))
        let killAt = FaultInjection(environment: context.environment)
        var firstFailure: (any Error)?
        for id in targets {
            guard let region = catalog.region(id) else { continue }
            let bar = ProgressBar.isWanted(console) ? ProgressBar(label: id, console: console) : nil
            do {
                let outcome = try installer.sync(
                    region, from: catalog, authorization: authorization, lock: lock,
                    stage: { killAt.reached($0.rawValue) },
                    progress: { received, total in
                        killAt.reachedBytes(received)
                        bar?.update(received, of: total)
                    })
                bar?.finish()
                report(outcome, region: region, context: context)
            } catch {
                bar?.finish()
                firstFailure = firstFailure ?? error
                if context.json {
                    console.json(["region": id, "action": "failed", "version": region.version, "error": MapGateCLI.describe(error)])
                } else {
                    console.error(MapGateCLI.describe(error))
                }
            }
        }
        return firstFailure.map { ExitCode.forError($0) } ?? ExitCode.success
    }

    private func report(_ outcome: RegionInstaller.Outcome, region: CatalogRegion, context: Context) {
        switch outcome {
        case .upToDate(let version):
            if context.json {
                context.console.json(["region": region.id, "action": "up-to-date", "version": version])
            } else {
                context.console.print("\(region.id) \(TerminalText.inline(version)): up to date")
            }
        case .installed(let version, let previous, let downloaded, let resumedFrom):
            if context.json {
                context.console.json([
                    "region": region.id, "action": previous == nil ? "installed" : "updated", "version": version,
                    "previousVersion": previous ?? NSNull(), "bytes": downloaded, "resumedFrom": resumedFrom,
                ])
            } else {
                let what = previous.map { "updated from \(TerminalText.inline($0))" } ?? "installed"
                let resumed = resumedFrom > 0 ? ", resumed at \(Format.bytes(resumedFrom))" : ""
                context.console.print("\(region.id) \(TerminalText.inline(version)): \(what) (\(Format.bytes(downloaded)) downloaded\(resumed))")
            }
        }
    }
}
