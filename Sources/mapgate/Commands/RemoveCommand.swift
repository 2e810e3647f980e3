import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate remove REGION`.
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = L.localized("Remove an installed region or style")
    static let arguments = "REGION..."
    static let discussion = L.localized("""
        Deletes each region's file, its record and any partial download of it; a name that is an
        installed publisher's style (see 'mapgate list') and no region removes that style (completion
        offers the regions). Takes
        the data directory's lock. A region that is not installed but has a partial download (a
        first sync stopped) has that download removed. With --json, one object per name: region,
        action ("removed", "removedDownload" or "failed"), version, bytes, error, exitCode.
        """)
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        guard !arguments.positional.isEmpty else { throw UsageError(message: L.localized("name the region to remove"), usage: Self.usage) }
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        let lock = try context.lockDataDirectory()
        let library = try context.regionLibrary()
        var firstFailure: (any Error)?
        let styles = InstalledStyles(directory: context.dataDirectory)
        // Every name is looked up before anything is removed: one that names two regions stops
        // the run with nothing removed (found by an attack: the others were removed, then 64).
        // One region named twice (by its name and its id) is removed once, not then "not installed".
        var seen = Set<String>()
        let ids = try regions.map(library.regionID(typed:)).filter { seen.insert($0).inserted }
        for id in ids {
            do {
                // A name that is an installed style and no region removes the style. (Asked of the
                // one name: another region's damaged row does not stop it, nor the row's own, which
                // the advice for it says to remove.)
                if styles.contains(id), try !library.hasRecord(id) {
                    let removed = try styles.remove(id, lock: lock)
                    if context.json {
                        context.console.json(Line(region: id, action: "removed", version: removed.bundle?.version))
                    } else {
                        context.console.print(L.localized("removed style %1$s", "\(id)") + (removed.bundle.map { " " + TerminalText.inline($0.version) } ?? ""))
                    }
                    continue
                }
                switch try library.remove(id, lock: lock) {
                case .region(let removed):
                    if context.json {
                        context.console.json(Line(region: id, action: "removed", version: removed?.version))
                    } else {
                        context.console.print(
                            removed.map { L.localized("removed %1$s %2$s", id, TerminalText.inline($0.version)) }
                                ?? L.localized("removed %1$s (its record was damaged)", id))
                    }
                case .download(let bytes):
                    if context.json {
                        context.console.json(Line(region: id, action: "removedDownload", bytes: bytes))
                    } else {
                        context.console.print(L.localized("removed the partial download of %1$s (%2$s; it was not installed)", id, ByteCount.text(bytes)))
                    }
                }
            } catch {
                firstFailure = firstFailure ?? error
                let message = MapGateCLI.describe(error)
                if context.json {
                    context.console.json(Line(region: id, action: "failed", error: message, exitCode: ExitCode.forError(error)))
                } else {
                    context.console.error(message)
                }
            }
        }
        return firstFailure.map { ExitCode.forError($0) } ?? ExitCode.success
    }

    /// One region of `remove --json`: the same keys for both outcomes.
    struct Line: Encodable {
        var region: String
        var action: String
        var version: String? = nil
        /// The bytes of a partial download removed ("removedDownload").
        var bytes: Int64? = nil
        var error: String? = nil
        var exitCode: Int32? = nil
    }
}
