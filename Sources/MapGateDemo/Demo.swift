import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate demo`: the whole story on the project's own fixtures, against a local origin on
/// 127.0.0.1, with a simulated clock so thirty days pass in a second.
public final class Demo {
    /// What the demo tells, in order; the executable prints it.
    public enum Event: Sendable {
        case step(String)
        case line(String)
    }

    private let fixtures: String
    private let work: String
    private let tell: (Event) -> Void
    private let time: ManualTime
    private var clock: Clock { time.clock }

    /// - Parameters:
    ///   - fixtures: the project's `Fixtures/` folder.
    ///   - workDirectory: a throw-away folder for the configuration and the data directory.
    private let leafletPath: String

    public init(
        fixtures: String, workDirectory: String, leafletPath: String = Configuration().leafletPath, start: Date = Demo.releaseDay,
        tell: @escaping (Event) -> Void
    ) {
        self.leafletPath = leafletPath
        self.fixtures = fixtures
        self.work = workDirectory
        self.tell = tell
        time = ManualTime(start)
    }

    /// The day the fixtures' store answer says 1.5.0 was released: the simulated story starts then.
    public static let releaseDay = Date(timeIntervalSince1970: 1_793_611_800)  // 2026-11-02T09:30:00Z

    /// The demo installs and serves this package and no other, whatever `--fixtures` holds: the
    /// demo runs its own gate, so it must be no way to serve other map data around the real one.
    public static let bundledRegion = (id: "demo-world", sha256: "94e7dfc754be76d2eda159f58e67b6f99131f968cac5e90690f330ddb026d6c2")

    /// The demo publisher's public key (`Fixtures/keys/demo.pub`); the demo's catalog is signed
    /// with its secret half, as a publisher's would be.
    public static let publisherKey = "RWR3FrpUU/yaSpsVqdL/nIPgTaAyEjBZc0vtcivX4Y+pDFGQgMG3PX1y"

    private func advance(days: Double) { time.advance(days: days) }
    private func setTime(_ date: Date) { time.set(date) }

    /// Runs the story and returns the tile server it ends with (the caller stops it), whose
    /// viewer page the last step names.
    ///
    /// - Parameter keepsServing: the caller serves the viewer on after the story (on a terminal,
    ///   until Ctrl-C); otherwise the last step says the server stops with the demo.
    public func run(keepsServing: Bool = true) throws -> DemoServer? {
        guard FileManager.default.fileExists(atPath: fixtures + "/lookup/store-1.5.0.json") else {
            throw GeneralFailure(L.localized("demo fixtures not found in %1$s (run from the repository or pass --fixtures DIR)", "\(fixtures)"), kind: .io)
        }
        let origin = try TestOrigin(root: fixtures)
        // The origin runs as long as the demo's server does: its port stays the demo's, so no other
        // process can answer the demo's gate in its place.
        var servedOn = false
        defer { if !servedOn { origin.stop() } }
        let directory = DataDirectory(path: work + "/data")
        // The demo's own rules and its own gate state, in its throw-away folder: the user's real
        // gate is neither read nor changed.
        var settings = GateSettings(appID: 6_450_000_001, lookupURL: origin.baseURL + "/lookup/store-\(BuildInfo.version).json")
        let stateFolder = work + "/state"
        let client = HTTPClient()
        let start = clock.now
        func gate(installed: String = BuildInfo.version) throws -> Gate {
            let store = try GateStore(stateFolder: stateFolder, directory: directory, clock: clock)
            return Gate(store: store, settings: settings, clock: clock, installed: try AppVersion(installed))
        }
        func day() -> String { L.format(L.localized("day %d"), String(Int(clock.now.timeIntervalSince(start) / 86_400))) }

        tell(.step(L.format(L.localized("A local origin serves the project's fixtures at %1$s; data in %2$s"), origin.baseURL, directory.path)))
        tell(.step(L.format(L.localized("%1$s: mapgate %2$s checks the store"), day(), BuildInfo.version)))
        try show(try gate().check())

        let state = try StateDatabase(directory: directory, clock: clock)
        let library = RegionLibrary(directory: directory, state: state)
        self.library = library
        let source = CatalogSource(url: origin.baseURL + "/catalog.json", trustedKeys: [Self.publisherKey], requiresSignature: true, client: client)
        let fetched = try source.fetch()
        let accepted = try gate().accept(fetched)
        let catalog = accepted.catalog
        guard catalog.regions.count == 1, let bundled = catalog.regions.first, bundled.id == Self.bundledRegion.id,
            bundled.sha256 == Self.bundledRegion.sha256
        else {
            throw GeneralFailure(
                L.localized("demo fixtures in %1$s are not the bundled demo region (%2$s, SHA-256 %3$s…): the demo installs nothing else", "\(fixtures)", "\(Self.bundledRegion.id)", "\(Self.bundledRegion.sha256.prefix(12))"),
                kind: .badData)
        }
        tell(.step(L.format(L.localized("%1$s: sync: the catalog of %2$s offers %3$s"), day(), catalog.publisher, catalog.regions.map(\.id).joined(separator: ", "))))
        tell(.line(L.format(L.localized("catalog serial %1$s, signed by key %2$s: signature verified"), catalog.serial.map(String.init) ?? "-", fetched.signature?.keyID.hex ?? "?")))
        try showTamperedCatalogRefused(signature: fixtures + "/catalog.json.minisig", catalog: fixtures + "/catalog.json", client: client)
        // The user's own use case, as `mapgate sync` runs it: the workflow decides what costs a use.
        let installer = RegionInstaller(
            directory: directory, state: state, downloader: PackageDownloader(client: client), clock: clock,
            appVersion: try AppVersion(BuildInfo.version))
        let workflow = SyncWorkflow(catalog: accepted, savesCatalog: true, library: library, installer: installer)
        let summary = try workflow.run(requested: [bundled.id], gate: try gate(), lock: { try DirectoryLock(directory: directory) }) { event in
            switch event {
            case .synced(let region, let outcome):
                tell(.line("\(region.id): \(outcome)"))
                demoRegion = region.id
            case .failed(let region, _, let error):
                tell(.line(region.map { "\($0): \(errorMessage(error))" } ?? errorMessage(error)))
            case .notice(let text):
                tell(.line(text))
            default:
                break
            }
        }
        if let failure = summary.firstFailure { throw failure }
        for region in try library.installed() {
            let file = try library.open(region.id, authorization: try gate().authorizeUse())
            tell(.line(L.format(
                L.localized("installed %1$s %2$s: %3$s, zoom %4$s-%5$s, %6$s tiles, SHA-256 %7$s…"), region.id, region.version, region.format.rawValue,
                String(region.minzoom ?? 0), String(region.maxzoom ?? 0), String(try file.tileCount()), String((region.sha256 ?? "-").prefix(12)))))
            let tile = try file.tile(z: 1, x: 1, y: 0)
            tell(.line(L.format(L.localized("tile 1/1/0 of %1$s: %2$s bytes of %3$s"), region.id, String(tile?.count ?? 0), tile.flatMap { TileFormat(sniffing: $0) }?.rawValue ?? "?")))
        }

        settings.lookupURL = origin.baseURL + "/lookup/store-1.5.0.json"
        tell(.step(L.format(L.localized("%1$s: the publisher releases 1.5.0; the next check sees it and the grace period starts"), day())))
        try show(try gate().check())

        advance(days: 29)
        tell(.step(L.format(L.localized("%1$s: a use within the grace period runs without a prompt"), day())))
        try use(gate())

        advance(days: 1)
        tell(.step(L.format(L.localized("%1$s: the grace period is over; each use prompts and counts down"), day())))
        for _ in 1...settings.maxPrompts {
            try use(gate())
            advance(days: 0.25)
        }
        tell(.step(L.format(L.localized("%1$s: the next use is refused: no sync, no tiles"), day())))
        try use(gate())

        settings.lookupURL = "http://127.0.0.1:1/lookup"
        tell(.step(L.localized("going offline does not reopen the gate")))
        try use(gate())

        let later = clock.now
        setTime(start)
        tell(.step(L.localized("setting the clock back to day 0 does not reopen it either")))
        try use(gate())
        setTime(later)

        settings.lookupURL = origin.baseURL + "/lookup/store-1.5.0.json"
        tell(.step(L.localized("after updating to 1.5.0 the gate is open again, even before the next lookup")))
        let updated = try gate(installed: "1.5.0")
        try show(try updated.status())
        try use(updated)

        guard let region = demoRegion else { return nil }
        tell(.step(L.format(L.localized("open %s: the local tile server serves it to map clients"), region)))
        let serverClock = clock
        let finalSettings = settings
        // The server serves the bundled region and nothing else, checked by SHA-256 each time the
        // regions are read: a region copied into the demo's folder is never served behind its gate.
        // (The demo installs its region from a full package, whose SHA-256 is always taken.)
        let installedFile = try library.region(region).sha256 ?? ""
        let served = RegionLibrary(directory: directory, state: state, pins: [region: installedFile])
        let server = try TileServer(
            library: served, authorization: try updated.authorizeUse(opening: [region]),
            configuration: .init(leafletPath: leafletPath),
            makeGate: {
                Gate(
                    store: try GateStore(stateFolder: stateFolder, directory: directory, clock: serverClock), settings: finalSettings,
                    clock: serverClock, installed: try AppVersion("1.5.0"))
            })
        let tileJSON = try client.get(HTTPRequest(url: "\(server.baseURL)/\(region).json"))
        tell(.line(L.format(L.localized("GET /%1$s.json → %2$s, TileJSON %3$s bytes"), region, String(tileJSON.status), String(tileJSON.body.count))))
        let tile = try client.get(HTTPRequest(url: "\(server.baseURL)/\(region)/2/1/1.png"))
        tell(.line(L.format(L.localized("GET /%1$s/2/1/1.png → %2$s, %3$s, %4$s bytes"), region, String(tile.status), tile.header("Content-Type") ?? "?", String(tile.body.count))))
        tell(.line(L.format(L.localized("the demo's local origin answered %d request", "the demo's local origin answered %d requests", count: origin.requests.count), String(origin.requests.count))))
        if keepsServing {
            tell(.step(L.format(L.localized("viewer: %s"), "\(server.baseURL)/view/\(region)")))
        } else {
            tell(.step(L.format(L.localized("the viewer was served at %s and stops with the demo (on a terminal the demo keeps serving it until Ctrl-C)"), "\(server.baseURL)/view/\(region)")))
        }
        servedOn = true
        return DemoServer(tiles: server, origin: origin)
    }

    /// A catalog changed after signing (say by a hostile mirror) is refused before any download.
    private func showTamperedCatalogRefused(signature: String, catalog: String, client: HTTPClient) throws {
        let folder = work + "/tampered"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let original = try String(contentsOfFile: catalog, encoding: .utf8)
        try original.replacing("\"version\": \"2026.11\"", with: "\"version\": \"2026.12\"")
            .write(toFile: folder + "/catalog.json", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: signature, toPath: folder + "/catalog.json.minisig")
        let tampered = CatalogSource(url: "file://" + folder + "/catalog.json", trustedKeys: [Self.publisherKey], requiresSignature: true, client: client)
        do {
            _ = try tampered.fetch()
            tell(.line(L.localized("a tampered catalog was accepted: this must not happen")))
        } catch {
            tell(.line(L.format(L.localized("a copy of the catalog with one version edited is refused: %s"), errorMessage(error))))
        }
    }

    private func show(_ report: GateReport) throws {
        if let error = report.lookupError { tell(.line(L.format(L.localized("lookup failed: %s"), errorMessage(error)))) }
        if let release = report.record.lastRelease { tell(.line(L.format(L.localized("store version %1$s, installed %2$s"), release.version, report.installedVersion))) }
        tell(.line(L.format(L.localized("gate: %s"), report.summary)))
    }

    private var configurationMaxPrompts: Int { GateSettings().maxPrompts }
    private var demoRegion: String?
    private var library: RegionLibrary?

    /// One use: the gate decides, then (when allowed) a tile is read from the demo region.
    private func use(_ gate: Gate) throws {
        do {
            let authorization = try gate.authorizeUse()
            defer {
                if let library, let demoRegion, let tile = try? library.open(demoRegion, authorization: authorization).tile(z: 0, x: 0, y: 0) {
                    tell(.line(L.format(L.localized("tile 0/0/0 of %1$s: %2$s bytes"), demoRegion, String(tile.count))))
                }
            }
            switch authorization.decision {
            case .allowed: tell(.line(L.localized("use allowed")))
            case .notice: tell(.line(L.format(L.localized("use allowed; notice: %s"), authorization.report.summary)))
            case .prompt(let left):
                let lines = GatePrompt(report: authorization.report, usesLeft: left).lines
                // The whole prompt once; after that its last line, which is what changes.
                for line in left == configurationMaxPrompts ? lines : [lines.last ?? ""] { tell(.line(L.format(L.localized("prompt: %s"), line))) }
                tell(.line(L.localized("the user answers \"later\" and the command runs")))
            case .refused: tell(.line(L.localized("refused")))
            }
        } catch let error as GateClosedError {
            tell(.line(L.format(L.localized("refused (exit 77): %s"), errorMessage(error))))
            tell(.line(L.localized("sync, open, serve and tile all refuse; list, status and check still work")))
        }
    }
}
