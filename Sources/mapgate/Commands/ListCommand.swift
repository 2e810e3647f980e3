import Foundation
import MapGate

/// `mapgate list`: the installed regions.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "List installed regions"
    static let discussion = """
        With --json, one object per region per line: id, name, version, format, minzoom, maxzoom,
        tiles, sizeOnDisk, bounds, installedAt, sha256.
        """

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
    }

    func run(_ context: Context) throws -> Int32 {
        let library = try context.regionLibrary()
        let regions = try library.installed()
        let console = context.console
        if !context.json {
            if regions.isEmpty {
                console.print("No region is installed. See 'mapgate catalog' and 'mapgate sync REGION'.")
                return ExitCode.success
            }
            console.print(Table.row(["ID", "NAME", "VERSION", "FORMAT", "ZOOM", "TILES", "SIZE", "BOUNDS"], widths: Self.widths))
        }
        for region in regions {
            // Tile counts come from the file itself (read-only; no gate use: nothing is served).
            let tiles = (try? MBTilesFile(path: library.directory.regionPath(region.id)).tileCount()) ?? -1
            let bounds = region.bounds?.map { String(format: "%.4g", $0) }.joined(separator: ",")
            if context.json {
                console.json([
                    "id": region.id, "name": region.name, "version": region.version, "format": region.format.rawValue,
                    "minzoom": region.minzoom ?? NSNull(), "maxzoom": region.maxzoom ?? NSNull(), "tiles": tiles,
                    "sizeOnDisk": region.size, "bounds": region.bounds ?? NSNull(), "installedAt": Format.iso(region.installedAt),
                    "sha256": region.sha256,
                ])
            } else {
                let zoom = region.minzoom.map { "\($0)-\(region.maxzoom ?? $0)" } ?? "?"
                console.print(
                    Table.row(
                        [region.id, region.name, region.version, region.format.rawValue, zoom, tiles < 0 ? "?" : String(tiles),
                         Format.bytes(region.size), bounds ?? "-"], widths: Self.widths))
            }
        }
        return ExitCode.success
    }

    static let widths = [14, 22, 10, 7, 6, 7, 10, 0]
}

/// `mapgate remove REGION`.
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "Remove an installed region"
    static let arguments = "REGION..."
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        guard !arguments.positional.isEmpty else { throw UsageError(message: "name the region to remove", usage: Self.usage) }
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        let lock = try context.lockDataDirectory()
        let library = try context.regionLibrary()
        for id in regions {
            let removed = try library.remove(id, lock: lock)
            if context.json {
                context.console.json(["region": id, "action": "removed", "version": removed.version])
            } else {
                context.console.print("removed \(id) \(removed.version)")
            }
        }
        return ExitCode.success
    }
}

/// `mapgate verify [REGION...]`.
struct VerifyCommand: Command {
    static let name = "verify"
    static let abstract = "Check installed regions against the hash recorded at install"
    static let arguments = "[REGION...]"
    static let discussion = "Checks each region's size, SHA-256 and SQLite integrity. Exit 65 when one is damaged."
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        let library = try context.regionLibrary()
        let ids = regions.isEmpty ? try library.installed().map(\.id) : regions
        var damaged = 0
        for id in ids {
            let result = try library.verify(id)
            if !result.isIntact { damaged += 1 }
            if context.json {
                context.console.json(["region": id, "version": result.region.version, "ok": result.isIntact, "problem": result.problem ?? NSNull()])
            } else if let problem = result.problem {
                context.console.error("region \(id): damaged: \(problem); run 'mapgate remove \(id)' and 'mapgate sync \(id)'")
            } else {
                context.console.print("\(id) \(result.region.version): ok")
            }
        }
        return damaged == 0 ? ExitCode.success : ExitCode.badData
    }
}

extension Context {
    /// Takes the one-writer lock of the data directory, telling the user when it must wait.
    func lockDataDirectory() throws -> DirectoryLock {
        try DirectoryLock(directory: dataDirectory) {
            console.note("waiting for another mapgate to finish with \(dataDirectory.path)…")
        }
    }
}
