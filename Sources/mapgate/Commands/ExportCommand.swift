import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// `mapgate export REGION FILE.pmtiles`: an installed region as a PMTiles v3 archive (issue 39).
struct ExportCommand: Command {
    static let name = "export"
    static let abstract = L.localized("Write an installed region as a PMTiles v3 archive")
    static let arguments = "REGION FILE"
    static let discussion = L.localized("""
        Writes every tile of the region, exactly as installed, as a PMTiles v3 archive (clustered,
        each distinct tile once, gzip-compressed directories, leaf directories when the root would
        pass 16 KiB) for go-pmtiles, martin, tileserver-gl or a PMTiles client. A regular FILE is
        replaced atomically; - writes the archive to standard output (not a terminal), a FIFO or a
        device is written through. It hands over every tile at once, so it is a use of the update
        gate, like tile: refused when the gate is closed, counted only once the archive is in place
        (or its first byte is read), given back on failure or Ctrl-C. Tiles wait in $TMPDIR while the
        archive is made. With --json, one object: region, file, tiles, size (on standard error
        when the archive goes to standard output). In system mode the service makes the archive
        and this process writes FILE.
        """)

    let region: String
    let output: String

    init(parsing arguments: ParsedArguments) throws {
        guard arguments.positional.count == 2 else { throw UsageError(message: L.localized("expected REGION FILE"), usage: Self.usage) }
        region = arguments.positional[0]
        try UsageError.requireRegion(region, usage: Self.usage)
        output = arguments.positional[1]
    }

    /// A PMTiles archive under an MBTiles file's name would be taken for one by whatever opens it
    /// next (found by an attack: written without a word): a usage error, before the gate.
    static func refuseMBTilesName(_ output: String) throws {
        // The name given, and the file its links lead to, there yet or not (found by an attack: a
        // link named `.pmtiles` to an MBTiles file had the file replaced by an archive).
        let names = output == "-" ? [output] : [output, OutputDestination.finalTarget(of: output)]
        if names.contains(where: { $0.split(separator: "/").last?.lowercased().hasSuffix(".mbtiles") == true }) {
            throw UsageError(message: L.localized("%1$s: export writes a PMTiles v3 archive, not an MBTiles file: name it .pmtiles", output), usage: usage)
        }
    }

    func run(_ context: Context) throws -> Int32 {
        // Everything that can be checked is checked before the gate counts a use.
        let destination = try OutputDestination.resolve(output)
        try destination.refuse(inside: [context.dataDirectory.path, context.stateFolder])
        try Self.refuseMBTilesName(output)
        if case .standardOutput = destination.kind, isatty(STDOUT_FILENO) == 1 {
            throw OutputError(path: L.localized("standard output"), reason: L.localized("it is a terminal; refusing to write a PMTiles archive to it: redirect it or name a FILE"), kind: .usage)
        }
        let library = try context.readOnlyRegionLibrary()
        let region = try library.regionID(typed: region)
        let installed = try library.requireIntact(region).record
        let format = installed.format
        let scratch = context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        try destination.requireReader(within: context.outputStallLimit)
        let faults = FaultInjection(environment: context.environment)
        let summary = try GateGuard.withUse(context, opening: [region]) { authorization -> PMTilesWriter.Summary in
            let store = try library.open(region, authorization: authorization)
            let metadata = try store.metadata()
            switch destination.kind {
            case .replace(let path):
                // Made in full in an unnamed file beside FILE, then linked into place: the delivery.
                let file = try OutputDestination.TemporaryFile(beside: path)
                defer { close(file.descriptor) }
                let summary: PMTilesWriter.Summary
                do {
                    summary = try PMTilesWriter.write(store, metadata: metadata, format: format, scratchDirectory: scratch, path: path) {
                        try Self.writeAll($0, to: file.descriptor, name: path)
                    }
                    guard fsync(file.descriptor) == 0 else { throw OutputError(path: path, reason: "fsync: \(SystemErrorReason.text(errno))", kind: .io) }
                } catch {
                    file.discard()
                    throw error
                }
                faults.reached("delivering")
                // Once linked, a signal changes nothing: the run ends with its own code, 0 (as
                // `tile -o` does; found by an attack: a signal while "exported …" waited for a full
                // pipe ended it with 130 over an archive in place and counted).
                try SignalRouter.finishingOutput(console: context.console) { delivered in
                    try authorization.deliver {
                        try file.moveIntoPlace()
                        delivered()
                    }
                    faults.reached("delivered")
                }
                return summary
            case .standardOutput, .writeThrough:
                // Written through: delivered with the first bytes (the header and directories).
                let (descriptor, name, opened) = try Self.open(destination, context: context)
                defer { if opened { close(descriptor) } }
                var delivered = false
                var size = 0
                // A signal after the delivery lets the archive be written to its end, as for `tile`.
                return try GateGuard.sayingWhenCounted(authorization) { try SignalRouter.finishingOutput(console: context.console) { isDelivered in
                    try PMTilesWriter.write(
                        store, metadata: metadata, format: format, scratchDirectory: scratch, path: name, announcing: { size = Int(clamping: $0) }
                    ) { data in
                        if delivered { return try Self.writeAll(data, to: descriptor, name: name) }
                        // The first byte alone is the delivery, once a reader can take it, as for `tile`;
                        // in a regular file, once the whole archive's room is taken.
                        try OutputDestination.writeAll(
                            data, to: descriptor, name: name, room: size, stallLimit: context.outputStallLimit, willDeliver: { faults.reached("delivering") },
                            deliver: { step in
                                try authorization.deliver {
                                    try step()
                                    isDelivered()
                                }
                                faults.reached("delivered")
                            })
                        delivered = true
                    }
                } }
            }
        }
        guard let summary else { return GateGuard.updateChosenCode(context) }
        // In system mode the user's FILE is written by their own process from this standard
        // output, and said by it once in place (``SystemRelay``): said here, it would be "-", and
        // on standard error.
        if context.environment[SystemService.Settings.relayedOutputVariable] == "1", destination.kind == .standardOutput(explicit: true),
            (try? context.isSystemService()) == true
        {
            return ExitCode.success
        }
        let toStandardOutput = destination.kind == .standardOutput(explicit: true)
        Self.report(
            region: region, file: toStandardOutput ? "-" : output, tiles: summary.addressedTiles, bytes: Int64(summary.bytes),
            console: context.console, json: context.json, replaced: destination.kind.isReplace, onStandardError: toStandardOutput)
        return ExitCode.success
    }

    /// What an export says it wrote: with `--json` its line (on standard error when the archive
    /// is on standard output), else, for a FILE replaced in full, the sentence.
    static func report(region: String, file: String, tiles: Int, bytes: Int64, console: Console, json: Bool, replaced: Bool, onStandardError: Bool) {
        if json {
            console.json(Line(region: region, file: file, tiles: tiles, size: bytes), onStandardError: onStandardError)
        } else if replaced {
            console.print(L.localized("exported %1$s to %2$s: %3$s tiles, %4$s", region, TerminalText.inline(file), "\(tiles)", ByteCount.text(bytes)))
        }
    }

    /// The descriptor a written-through destination is written with, its name, and whether it
    /// was opened here (to be closed).
    /// As `tile -o` opens it: a dangling symbolic link's file created, a FIFO's reader waited
    /// for after saying so.
    private static func open(_ destination: OutputDestination, context: Context) throws -> (Int32, String, Bool) {
        switch destination.kind {
        case .standardOutput: return (STDOUT_FILENO, OutputDestination.standardOutputName, false)
        case .writeThrough(let path, let append):
            let descriptor = try OutputDestination.openWriteThrough(path, append: append) { context.console.note(OutputDestination.waitingNote($0)) }
            return (descriptor, path, true)
        case .replace(let path): return (-1, path, false)
        }
    }

    private static func writeAll(_ data: Data, to descriptor: Int32, name: String) throws {
        let piece = OutputDestination.piece(for: descriptor)
        try data.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + done, min(piece, buffer.count - done))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw OutputError(path: name, reason: SystemErrorReason.text(errno), kind: .io) }
                done += written
                SignalRouter.outputWritten.add(written, ordering: .relaxed)
            }
        }
    }

    /// `export --json`.
    struct Line: Encodable {
        var region: String
        var file: String
        var tiles: Int
        var size: Int64
    }
}
