import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate verify [REGION...]`.
struct VerifyCommand: Command {
    static let name = "verify"
    static let abstract = L.localized("Check installed regions against the hash recorded at install")
    static let arguments = "[REGION...]"
    static let discussion = L.localized(
        "Checks each region's size, SHA-256, SQLite integrity and tiles' hash. Exit 65 when one is damaged or its tiles are not the ones its catalog declared, 74 when one cannot be read (a permission, a failing disk: nothing is changed)."
    )
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        regions = arguments.positional
        for typed in regions { try UsageError.requireRegion(typed, usage: Self.usage) }
    }

    func run(_ context: Context) throws -> Int32 {
        guard let library = try context.existingRegionLibrary() else {
            let note = context.missingDataDirectoryNote
            guard regions.isEmpty else { throw GeneralFailure(L.localized("region %1$s: not installed (%2$s)", "\(regions[0])", "\(note)"), kind: .failure) }
            if !context.json { context.console.print(L.localized("%1$s: nothing to verify.", TerminalText.inline(note))) }
            return ExitCode.success
        }
        // One region named twice (by its name and its id) is checked once (found by an attack).
        var seen = Set<String>()
        let ids = regions.isEmpty ? try library.installed().map(\.id) : try regions.map(library.regionID(typed:)).filter { seen.insert($0).inserted }
        if ids.isEmpty, !context.json {
            context.console.print(L.localized("No region is installed: nothing to verify."))
        }
        var damaged = 0
        var unreadable = 0
        for id in ids {
            // Not installed, or removed while it was checked (a `remove` ran): a region asked for
            // by name is said not installed, as if `verify` had started after it; one of the
            // listing is left out.
            guard let result = try library.verify(id, onWait: context.noteWaitingForWriter) else {
                if !regions.isEmpty { _ = try library.region(id) }
                continue
            }
            if result.isUnreadable {
                unreadable += 1
            } else if !result.isIntact {
                damaged += 1
            }
            // So that the advice below works: the next `sync` hashes the file instead of trusting its stamp.
            if result.bytesDiffer { try? context.regionLibrary().distrustStamp(of: result.region) }
            // Said when the mark could not be recorded (another mapgate at work for long, a data
            // directory this user cannot write): `sync` would call the region up to date.
            let unmarked = result.tilesDamaged && (try? context.regionLibrary().markTilesDamaged(of: result.region)) != true
            if context.json {
                context.console.json(
                    Line(
                        region: id, version: result.region.version, ok: result.isIntact, problem: result.problem, unreadable: result.isUnreadable,
                        catalogDisagrees: result.tilesAreNotTheCatalogs, contentHash: result.region.contentHash))
            } else if let problem = result.problem, result.tilesAreNotTheCatalogs {
                // Not called damaged, and no advice to install it again: the same package gives the same tiles.
                context.console.error(L.localized("region %1$s: %2$s", "\(id)", "\(problem)"))
            } else if let problem = result.problem, result.isUnreadable {
                // Not called damaged, and no advice to install it again: that would not help.
                context.console.error(L.localized("region %1$s: cannot be checked: %2$s (nothing was changed; check the disk or the permissions, then verify again)", "\(id)", "\(problem)"))
            } else if let problem = result.problem, unmarked {
                context.console.error(
                    L.localized(
                        "region %1$s: damaged: %2$s; it could not be marked for 'mapgate sync' to install it again (another mapgate is at work, or this user cannot write the data directory): run 'mapgate verify %1$s' again as its owner once it is done, then 'mapgate sync %1$s'",
                        "\(id)", "\(problem)"))
            } else if let problem = result.problem {
                context.console.error(L.localized("region %1$s: damaged: %2$s; %3$s", "\(id)", "\(problem)", "\(RegionLibrary.repairAdvice(for: result.region))"))
            } else {
                let version = TerminalText.inline(result.region.version)
                if let hash = result.region.contentHash {
                    // The tiles' hash said in the sentence, translated (found by an attack: " (tiles …)" was English in every language).
                    context.console.print(L.localized("%1$s %2$s: ok (tiles %3$s)", "\(id)", "\(version)", "\(hash)"))
                } else {
                    context.console.print(L.localized("%1$s %2$s: ok", "\(id)", "\(version)"))
                }
            }
        }
        if damaged > 0 { return ExitCode.badData }
        return unreadable > 0 ? ExitCode.io : ExitCode.success
    }

    /// One region of `verify --json`.
    struct Line: Encodable {
        var region: String
        var version: String
        var ok: Bool
        var problem: String?
        /// The file could not be read (not known to be damaged): exit 74, not 65.
        var unreadable: Bool
        /// The bytes are the ones installed but their tiles are not the hash the catalog declared:
        /// the publisher's fault (65), which installing again would not change.
        var catalogDisagrees: Bool
        var contentHash: String?
    }
}
