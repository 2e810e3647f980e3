import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate mirror DIR`: write what this machine has (the last signed catalog and the installed
/// regions' packages) into a folder that another mapgate syncs from with `sync --from DIR`.
struct MirrorCommand: Command {
    static let name = "mirror"
    static let abstract = L.localized("Write a mirror of the installed regions for another machine (USB stick, LAN)")
    static let arguments = "DIR"
    static let discussion = L.localized("""
        Writes into DIR the last catalog 'sync' accepted, exactly as the publisher signed it, and
        the package of each installed region and style that is the catalog's version, byte for
        byte what the catalog's SHA-256 names (rebuilt from the installed file; a region whose
        package cannot be rebuilt exactly is left out, and the mirror says why). Another machine
        runs 'mapgate sync --from DIR' (or syncs from 'mapgate serve --share DIR' over the LAN)
        and checks everything as strictly as from the publisher. Writing is atomic: a mirror cut
        while it is written is never taken as a valid one. The installed data is only read, and
        writing a mirror is not a use of the update gate.
        With --json, one object per region or style (id, kind, action "written", "kept" or
        "left-out", version, bytes, reason), then a summary line (mirror, regions, styles, deltas, bytes).
        """)
    let destination: String

    init(parsing arguments: ParsedArguments) throws {
        guard arguments.positional.count == 1 else {
            throw UsageError(message: arguments.positional.isEmpty ? "name the folder to write the mirror into" : "one folder only", usage: Self.usage)
        }
        destination = arguments.positional[0]
    }

    func run(_ context: Context) throws -> Int32 {
        guard let library = try context.existingRegionLibrary() else {
            throw GeneralFailure(L.localized("%1$s: nothing to mirror", "\(context.missingDataDirectoryNote)"), kind: .failure)
        }
        let settings = try context.gateSettings()
        let writer = MirrorWriter(
            directory: context.dataDirectory, library: library, trustedKeys: settings.trustedKeys,
            requiresSignature: settings.requireSignedCatalog, now: context.clock.now)
        let console = context.console
        let killAt = FaultInjection(environment: context.environment)
        var bar: ProgressBar?
        let path = PathText.standardized(destination.hasPrefix("/") ? destination : FileManager.default.currentDirectoryPath + "/" + destination)
        let summary = try writer.write(to: path, progress: { _, done, total in bar?.update(done, of: total) }) { event in
            switch event {
            case .started(let id, _):
                if ProgressBar.isWanted(console) { bar = ProgressBar(label: id, console: console) }
            case .kept(let package, let kind):
                report(Line(id: package.id, kind: kind.rawValue, action: "kept", version: package.version, bytes: package.size), context) {
                    "\(kind == .style ? "style " : "")\(package.id) \(TerminalText.inline(package.version)): already in the mirror (\(Format.bytes(package.size)))"
                }
            case .written(let package, let kind):
                killAt.reached("mirror-package")
                bar?.finish()
                bar = nil
                report(Line(id: package.id, kind: kind.rawValue, action: "written", version: package.version, bytes: package.size), context) {
                    "\(kind == .style ? "style " : "")\(package.id) \(TerminalText.inline(package.version)): written (\(Format.bytes(package.size)))"
                }
            case .leftOut(let id, let kind, let reason):
                bar?.finish()
                bar = nil
                if context.json {
                    console.json(Line(id: id, kind: kind.rawValue, action: "left-out", reason: reason))
                } else {
                    console.warning(L.localized("%1$s%2$s: left out of the mirror: %3$s", "\(kind == .style ? "style " : "region ")", "\(id)", "\(reason)"))
                }
            }
        }
        let manifest = summary.manifest
        if context.json {
            console.json(
                SummaryLine(mirror: path, regions: manifest.regions.count, styles: manifest.styles.count, deltas: manifest.deltas.count, bytes: summary.bytes))
        } else {
            console.print(
                L.localized("mirror at %1$s: %2$s %3$s, ", "\(TerminalText.inline(path))", "\(manifest.regions.count)", "\(manifest.regions.count == 1 ? "region" : "regions")")
                    + "\(manifest.styles.count) \(manifest.styles.count == 1 ? "style" : "styles"), "
                    + (manifest.deltas.isEmpty ? "" : "\(manifest.deltas.count) \(manifest.deltas.count == 1 ? "delta" : "deltas"), ")
                    + "\(Format.bytes(summary.bytes)), "
                    + "catalog serial \(manifest.catalogSerial.map(String.init) ?? "none"); another machine runs 'mapgate sync --from \(TerminalText.inline(path))'")
        }
        return ExitCode.success
    }

    private func report(_ line: Line, _ context: Context, human: () -> String) {
        if context.json { context.console.json(line) } else { context.console.print(human()) }
    }

    /// One region or style of `mirror --json`.
    struct Line: Encodable {
        var id: String
        var kind: String
        var action: String
        var version: String? = nil
        var bytes: Int64? = nil
        var reason: String? = nil
    }

    struct SummaryLine: Encodable {
        var mirror: String
        var regions: Int
        var styles: Int
        var deltas: Int
        var bytes: Int64
    }
}
