import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate catalog`: the regions on offer, against what is installed.
struct CatalogCommand: Command {
    static let name = "catalog"
    static let abstract = L.localized("List the regions the publisher offers, with installed versions")
    static let discussion = L.localized("""
        Reads the catalog at the configured catalogURL and checks its signature. Prints the
        publisher, serial, expiry and signing key. With --json, one object per region per line:
        id, name, version, size, installedSize, format, minzoom, maxzoom, installedVersion (or null),
        status ("not-installed", "installed", "update-available", "needs-newer-app"), publisher,
        serial, expires, signedBy (the key id, or null when unsigned); then one per publisher's
        style: style, name, version, regions, size, installedVersion (or null).

        With --saved, lists the catalog the last sync accepted, from the data directory, without
        the network (its signature checked again; the shell completions of 'sync' read it).
        """)
    static let options = [
        OptionSpec(name: "saved", help: L.localized("the catalog the last sync accepted, offline")),
    ]
    let saved: Bool

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
        saved = arguments.has("saved")
    }

    /// The catalog: fetched and accepted by the gate, or with --saved the one the last sync kept.
    private func load(_ context: Context) throws -> (catalog: Catalog, signedBy: String?) {
        guard saved else {
            let accepted = try context.fetchCatalog()
            return (accepted.catalog, accepted.fetched.signature?.keyID.hex)
        }
        guard let kept = SavedCatalog.load(from: context.dataDirectory) else {
            throw GeneralFailure(
                L.localized("no saved catalog in %1$s: 'mapgate sync' keeps the catalog it accepts", "\(context.dataDirectory.path)"), kind: .unavailable)
        }
        let settings = try context.gateSettings()
        let catalog = try kept.verified(in: context.dataDirectory, trustedKeys: settings.trustedKeys, requiresSignature: settings.requireSignedCatalog)
        let keyID = kept.signature.flatMap { try? MinisignSignature(data: $0).keyID.hex }
        return (catalog, keyID)
    }

    func run(_ context: Context) throws -> Int32 {
        let (catalog, signedBy) = try load(context)
        let installed = Dictionary(uniqueKeysWithValues: try context.existingRegionLibrary()?.installed().map { ($0.id, $0) } ?? [])
        let app = try AppVersion(BuildInfo.version)
        let console = context.console
        if !context.json {
            var facts = [L.format(L.localized("%d region", "%d regions", count: catalog.regions.count), String(catalog.regions.count))]
            if let generated = catalog.generated { facts.append(L.localized("generated %1$s", Localization.day(generated))) }
            if let serial = catalog.serial { facts.append(L.localized("serial %1$s", String(serial))) }
            if let expires = catalog.expires { facts.append(L.localized("expires %1$s", Localization.day(expires))) }
            facts.append(signedBy.map { L.localized("signed by key %1$s", $0) } ?? L.localized("unsigned"))
            if saved { facts.append(L.localized("saved by the last sync")) }
            // TRANSLATORS: joins the facts of the catalog's first line ("3 regions, serial 7, …").
            console.print(TerminalText.inline(catalog.publisher) + L.localized(": ") + facts.joined(separator: L.localized(", ")))
        }
        var table = Table(header: [
            L.localized("ID"), L.localized("NAME"), L.localized("VERSION"), L.localized("DOWNLOAD"), L.localized("FORMAT"), L.localized("ZOOM"),
            L.localized("INSTALLED"), L.localized("STATUS"),
        ], capped: [1])
        for region in catalog.regions {
            let current = installed[region.id]?.version
            let status = RegionStatus(region, in: catalog, installedVersion: current, app: app)
            if context.json {
                console.json(
                    Line(
                        id: region.id, name: region.name, version: region.version, size: region.size, installedSize: region.installedSize,
                        format: region.format.rawValue, minzoom: region.minzoom, maxzoom: region.maxzoom, installedVersion: current,
                        status: status.rawValue, publisher: catalog.publisher, serial: catalog.serial, expires: catalog.expires.map(Format.iso),
                        signedBy: signedBy))
            } else {
                let required = catalog.requiredAppVersion(for: region, app: app)
                let shown = status.label(requiring: required?.text)
                table.append([
                    region.id, region.name, region.version, Format.bytes(region.size), region.format.rawValue,
                    "\(region.minzoom)-\(region.maxzoom)", current ?? "-", shown,
                ])
            }
        }
        if context.json, !catalog.styles.isEmpty {
            let styles = InstalledStyles(directory: context.dataDirectory)
            let installedStyles = Dictionary((try? styles.all())?.map { ($0.id, $0.bundle?.version) } ?? [], uniquingKeysWith: { first, _ in first })
            for style in catalog.styles {
                console.json(
                    StyleLine(
                        style: style.id, name: style.name, version: style.version, regions: style.regions, size: style.size,
                        installedVersion: installedStyles[style.id] ?? nil))
            }
        }
        if !context.json {
            table.print(to: console)
            for style in catalog.styles {
                console.print(L.localized("style %1$s (%2$s) %3$s: draws %4$s, %5$s", "\(style.id)", "\(TerminalText.inline(style.name))", "\(style.version)", "\(style.regions.joined(separator: ", "))", "\(Format.bytes(style.size))"))
            }
        }
        // A bad style entry is said, and costs nothing else: the map data is what the catalog is for.
        // The first few of each kind are said on stderr, then a count (a catalog of 100,000 bad
        // entries printed 100,000 lines); `--json` lists every one on stdout.
        for rejection in catalog.rejectedStyles.prefix(Self.rejectionsShown) { console.warning(MapGateCLI.describe(rejection)) }
        if catalog.rejectedStyles.count > Self.rejectionsShown {
            console.warning(L.localized("%1$s more style entries rejected; --json lists them all", "\(catalog.rejectedStyles.count - Self.rejectionsShown)"))
        }
        // Bad entries are reported after the good ones, and make the exit code 65.
        for rejection in catalog.rejected.prefix(Self.rejectionsShown) { console.error(MapGateCLI.describe(rejection)) }
        if catalog.rejected.count > Self.rejectionsShown {
            console.error(L.localized("%1$s more region entries rejected (%2$s in all; --json lists them all)", "\(catalog.rejected.count - Self.rejectionsShown)", "\(catalog.rejected.count)"))
        }
        if context.json {
            for rejection in catalog.rejected {
                console.json(MapGateCLI.ErrorLine(error: MapGateCLI.describe(rejection), exitCode: ExitCode.forError(rejection)))
            }
        }
        return catalog.rejected.isEmpty ? ExitCode.success : ExitCode.badData
    }

    /// Rejected entries of each kind said one by one on stderr; the rest are counted.
    static let rejectionsShown = 10

    /// One publisher's style of `catalog --json`.
    struct StyleLine: Encodable {
        var style: String
        var name: String
        var version: String
        var regions: [String]
        var size: Int64
        var installedVersion: String?
    }

    /// One region of `catalog --json` (docs/commands.md).
    struct Line: Encodable {
        var id: String
        var name: String
        var version: String
        var size: Int64
        var installedSize: Int64
        var format: String
        var minzoom: Int
        var maxzoom: Int
        var installedVersion: String?
        var status: String
        var publisher: String
        var serial: Int64?
        var expires: String?
        var signedBy: String?
    }
}
