import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

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
        "left-out", version, bytes, reason), then a summary line (mirror, regions, styles, deltas, bytes, failed: the packages that could not be written, exit 74).
        """)
    let destination: String

    init(parsing arguments: ParsedArguments) throws {
        guard arguments.positional.count == 1 else {
            throw UsageError(
                message: arguments.positional.isEmpty ? L.localized("name the folder to write the mirror into") : L.localized("one folder only"), usage: Self.usage)
        }
        destination = arguments.positional[0]
    }

    func run(_ context: Context) throws -> Int32 {
        guard let library = try context.existingRegionLibrary() else {
            throw GeneralFailure(L.localized("%1$s: nothing to mirror", "\(context.missingDataDirectoryNote)"), kind: .failure)
        }
        // The writers' lock, held while the mirror is read: a `sync` saves the new catalog before it
        // installs the regions, and a mirror read in between took every region not yet installed
        // for one the catalog no longer offers, and dropped its package from the stick, exit 0
        // (found by an attack). A sync waits for the mirror, and the mirror for a sync.
        let lock = try context.lockDataDirectory()
        defer { withExtendedLifetime(lock) {} }
        let settings = try context.gateSettings()
        let writer = MirrorWriter(
            directory: context.dataDirectory, library: library, trustedKeys: settings.trustedKeys,
            requiresSignature: settings.requireSignedCatalog, now: context.clock.now,
            distrustStamp: { try? context.regionLibrary().distrustStamp(of: $0, lock: lock) })
        let console = context.console
        let killAt = FaultInjection(environment: context.environment)
        var bar: ProgressBar?
        let path = PathText.standardized(destination.hasPrefix("/") ? destination : FileManager.default.currentDirectoryPath + "/" + destination)
        let progress: (String, Int64, Int64) -> Void = { _, done, total in bar?.update(done, of: total) }
        let write: ((MirrorWriter.Event) -> Void) throws -> MirrorWriter.Summary
        if try context.isSystemService() {
            // System mode: the folder is the user's, written by the user's own process through
            // the socket it passed (descriptor 3); the path is only its name. Nothing else is written.
            var info = stat()
            guard fstat(3, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else {
                throw GeneralFailure(L.localized("in system mode the mirror is written by the caller's own process, through the socket it passes; none came"), kind: .usage)
            }
            let folder = RemoteMirrorFolder(socket: LocalSocket.adopting(3, name: path), path: path, scratch: context.dataDirectory.partialPath)
            write = { try writer.write(to: folder, progress: progress, onEvent: $0) }
        } else {
            write = { try writer.write(to: path, progress: progress, onEvent: $0) }
        }
        // A signal removes the package this run was writing (the next run would otherwise find
        // the stick fuller by it).
        let pid = getpid()
        let cleanup = SignalRouter.onSignal { _ in LocalMirrorFolder.removeTemporaryPackages(in: path, of: pid) }
        defer { withExtendedLifetime(cleanup) {} }
        let summary = try write { event in
            switch event {
            case .started(let id, _):
                if ProgressBar.isWanted(console) { bar = ProgressBar(label: id, console: console) }
            case .kept(let package, let kind):
                report(Line(id: package.id, kind: kind.rawValue, action: "kept", version: package.version, bytes: package.size), context) {
                    kind == .style
                        ? L.localized("style %1$s %2$s: already in the mirror (%3$s)", package.id, TerminalText.inline(package.version), Format.bytes(package.size))
                        : L.localized("%1$s %2$s: already in the mirror (%3$s)", package.id, TerminalText.inline(package.version), Format.bytes(package.size))
                }
            case .written(let package, let kind):
                killAt.reached("mirror-package")
                bar?.finish()
                bar = nil
                report(Line(id: package.id, kind: kind.rawValue, action: "written", version: package.version, bytes: package.size), context) {
                    kind == .style
                        ? L.localized("style %1$s %2$s: written (%3$s)", package.id, TerminalText.inline(package.version), Format.bytes(package.size))
                        : L.localized("%1$s %2$s: written (%3$s)", package.id, TerminalText.inline(package.version), Format.bytes(package.size))
                }
            case .leftOut(let id, let kind, let reason):
                bar?.finish()
                bar = nil
                if context.json {
                    console.json(Line(id: id, kind: kind.rawValue, action: "left-out", reason: reason.english))
                } else {
                    console.warning(
                        kind == .style
                            ? L.localized("style %1$s: left out of the mirror: %2$s", id, reason.localized)
                            : L.localized("region %1$s: left out of the mirror: %2$s", id, reason.localized))
                }
            }
        }
        let manifest = summary.manifest
        if context.json {
            console.json(
                SummaryLine(
                    mirror: path, regions: manifest.regions.count, styles: manifest.styles.count, deltas: manifest.deltas.count, bytes: summary.bytes,
                    failed: summary.isComplete ? nil : summary.failures.map(\.id)))
        } else {
            var facts = [
                L.format(L.localized("%d region", "%d regions", count: manifest.regions.count), String(manifest.regions.count)),
                L.format(L.localized("%d style", "%d styles", count: manifest.styles.count), String(manifest.styles.count)),
            ]
            if !manifest.deltas.isEmpty {
                facts.append(L.format(L.localized("%d delta", "%d deltas", count: manifest.deltas.count), String(manifest.deltas.count)))
            }
            facts.append(Format.bytes(summary.bytes))
            facts.append(L.localized("catalog serial %1$s", manifest.catalogSerial.map(String.init) ?? L.localized("none")))
            if summary.isComplete {
                console.print(
                    L.localized(
                        "mirror at %1$s: %2$s; another machine runs 'mapgate sync --from %3$s'", TerminalText.inline(path), facts.joined(separator: L.localized(", ")),
                        TerminalText.inline(ShellWord.quoted(path))))
            } else {
                // Not "another machine runs…": the mirror is not done (what it lacks follows).
                console.print(L.localized("mirror at %1$s: %2$s; incomplete", TerminalText.inline(path), facts.joined(separator: L.localized(", "))))
            }
        }
        if let expires = summary.expires, expires.timeIntervalSince(context.clock.now) < MirrorWriter.expiringSoon {
            console.warning(
                L.localized(
                    "the mirror's catalog expires on %1$s, and every machine refuses the mirror after that: run 'mapgate sync' where the publisher is reachable, then write the mirror again",
                    LocalTime.text(expires)))
        }
        // A package that could not be written (a full stick): the mirror lacks it, and
        // `mapgate mirror /media/usb -q && eject` must not take it for done.
        guard summary.isComplete else {
            for failure in summary.failures {
                console.error(L.localized("the mirror %1$s lacks %2$s: %3$s", TerminalText.inline(path), failure.id, failure.reason))
            }
            return ExitCode.io
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
        /// The packages that could not be written (the run exits 74); absent when none.
        var failed: [String]? = nil
    }
}
