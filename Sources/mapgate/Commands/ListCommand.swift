import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate list`: the installed regions.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = L.localized("List installed regions and styles")
    static let discussion = L.localized("""
        With --json, one object per region per line: id, name, version, format, minzoom, maxzoom,
        tiles, sizeOnDisk, bounds, installedAt, source (the package's URL: the publisher's, or a
        mirror's), sha256 (null for a region updated by a delta checked by its LtHash),
        contentHash (martin's agg_tiles_hash of the tiles), damaged (null, or why the file is not
        as installed: its size or, with a changed modification time or inode, its SHA-256, or
        its tiles' hash when it has no SHA-256); then one per installed publisher's style:
        style, name, version, regions, damaged.
        """)

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
    }

    func run(_ context: Context) throws -> Int32 {
        let console = context.console
        guard let library = try context.existingRegionLibrary() else {
            if !context.json { console.print(L.localized("%1$s. See 'mapgate catalog' and 'mapgate sync REGION'.", TerminalText.inline(context.missingDataDirectoryNote))) }
            return ExitCode.success
        }
        let regions = try library.installed()
        let styles = try InstalledStyles(directory: library.directory).all()
        defer { list(styles, context: context) }
        if !context.json {
            if regions.isEmpty {
                console.print(L.localized("No region is installed. See 'mapgate catalog' and 'mapgate sync REGION'."))
                return ExitCode.success
            }
        }
        var table = Table(header: [
            L.localized("ID"), L.localized("NAME"), L.localized("VERSION"), L.localized("FORMAT"), L.localized("ZOOM"), L.localized("TILES"),
            L.localized("SIZE"), L.localized("BOUNDS"), L.localized("INSTALLED ON"), L.localized("FROM"),
        ], capped: [1])
        for region in regions {
            // Tile counts come from the file itself (read-only; no gate use: nothing is served).
            // Counted once at install; regions installed before that are counted now.
            let tiles = region.tileCount ?? (try? MBTilesFile(path: library.directory.regionPath(region.id)).tileCount())
            let bounds = region.bounds.map(Self.boundsText)
            // Size and stamp (size, mtime, inode); the SHA-256 only when the stamp changed.
            var damage: String?
            if case .damaged(let reason) = try library.condition(of: region) {
                damage = reason
                console.warning(L.localized("region %1$s: damaged: %2$s; %3$s", "\(region.id)", "\(reason)", "\(RegionLibrary.repairAdvice(for: region))"))
            }
            if context.json {
                console.json(
                    Line(
                        id: region.id, name: region.name, version: region.version, format: region.format.rawValue, minzoom: region.minzoom,
                        maxzoom: region.maxzoom, tiles: tiles, sizeOnDisk: region.size, bounds: region.bounds,
                        installedAt: Format.iso(region.installedAt), source: region.sourceURL, sha256: region.sha256, contentHash: region.contentHash, damaged: damage))
            } else {
                let zoom = region.minzoom.map { "\($0)-\(region.maxzoom ?? $0)" } ?? "?"
                table.append([
                    region.id, region.name, damage == nil ? region.version : L.localized("%1$s (damaged)", region.version), region.format.rawValue, zoom, tiles.map(String.init) ?? "?",
                    Format.bytes(region.size), bounds ?? "-", Localization.day(region.installedAt),
                    RegionOrigin.label(region.origin),
                ])
            }
        }
        if !context.json { table.print(to: console) }
        return ExitCode.success
    }

    /// The installed styles after the regions (a style with a damaged file says why).
    private func list(_ styles: [InstalledStyles.Entry], context: Context) {
        guard !styles.isEmpty else { return }
        var table = Table(header: ["STYLE", "NAME", "VERSION", "DRAWS"], capped: [1])
        for style in styles {
            if let damaged = style.damaged { context.console.warning(L.localized("style %1$s: damaged (%2$s); 'mapgate sync' installs it again", "\(style.id)", "\(damaged)")) }
            if context.json {
                context.console.json(
                    StyleLine(style: style.id, name: style.bundle?.name, version: style.bundle?.version, regions: style.bundle?.regions, damaged: style.damaged))
            } else {
                table.append([style.id, style.bundle?.name ?? "-", style.bundle?.version ?? L.localized("(damaged)"), style.bundle?.regions.joined(separator: ", ") ?? "-"])
            }
        }
        if !context.json {
            context.console.print("")
            table.print(to: context.console)
        }
    }

    /// One style of `list --json`.
    struct StyleLine: Encodable {
        var style: String
        var name: String?
        var version: String?
        var regions: [String]?
        var damaged: String?
    }

    /// One region of `list --json` (docs/commands.md).
    struct Line: Encodable {
        var id: String
        var name: String
        var version: String
        var format: String
        var minzoom: Int?
        var maxzoom: Int?
        var tiles: Int?
        var sizeOnDisk: Int64
        var bounds: [Double]?
        var installedAt: String
        var source: String?
        /// Null for a region updated by a delta whose result was checked by its LtHash.
        var sha256: String?
        var contentHash: String?
        var damaged: String?
    }

    /// `west,south,east,north` with 4 significant digits, or as many more (up to 10) as it takes
    /// for a small region's west and east (and south and north) not to read as one number.
    static func boundsText(_ bounds: [Double]) -> String {
        var texts: [String] = []
        for digits in 4...10 {
            texts = bounds.map { String(cFormat: "%.\(digits)g", $0) }
            guard bounds.count == 4 else { break }
            let apart = (texts[0] != texts[2] || bounds[0] == bounds[2]) && (texts[1] != texts[3] || bounds[1] == bounds[3])
            if apart { break }
        }
        return texts.joined(separator: ",")
    }
}
