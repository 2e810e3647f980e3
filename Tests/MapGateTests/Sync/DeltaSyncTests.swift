import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// `sync` through deltas that `mapgate publish` made: three published versions, synced from each
/// older one, compared tile for tile with a fresh full install; every failure falls back.
@Suite struct DeltaSyncTests {
    let publish: PublishWorkspace
    let origin: TestOrigin
    let versions: [[TileKey: Data?]]

    init() throws {
        publish = try PublishWorkspace()
        let first = DeltaTestFiles.pyramid(maxZoom: 5, png: true, seed: 1)
        var second = DeltaTestFiles.changing(20, of: first, seed: 2)
        second.removeValue(forKey: try #require(second.keys.sorted().last))  // a removed tile
        let third = DeltaTestFiles.changing(20, of: second, seed: 3)
        versions = [first, second, third]
        try FileManager.default.createDirectory(atPath: publish.output, withIntermediateDirectories: true)
        origin = try TestOrigin(root: publish.output)
    }

    /// Publishes versions `from`...`upTo` in turn, each with its own metadata description.
    func publishVersions(from first: Int = 1, upTo last: Int) throws {
        for index in (first - 1)..<last {
            try publish.writeRegion("alpha.mbtiles", tiles: versions[index], metadata: ["version": "\(index + 1)", "description": "v\(index + 1)"])
            try publish.publish()
        }
    }

    /// A client's data directory with its own gate (nothing to look up).
    final class Client {
        let work: TemporaryDirectory
        let directory: DataDirectory
        let state: StateDatabase
        let baseURL: String
        var notices: [String] = []
        /// Free space in a folder, as the installer asks it (nil: the disk's own).
        var freeSpace: ((String) -> Int64?)?
        /// What the installer is told of a signal stopping the run (``RegionInstaller/isStopping``).
        let stopping = Locked(false)

        init(baseURL: String) throws {
            work = try TemporaryDirectory()
            directory = DataDirectory(path: work.file("data"))
            state = try StateDatabase(directory: directory)
            self.baseURL = baseURL
        }

        func catalog() throws -> Catalog {
            try CatalogSource(url: baseURL + "/catalog.json", trustedKeys: [], requiresSignature: false, client: HTTPClient()).fetch().catalog
        }

        @discardableResult
        func sync(catalog: Catalog? = nil, stage: (RegionInstaller.Stage) -> Void = { _ in }) throws -> RegionInstaller.Outcome {
            let catalog = try catalog ?? self.catalog()
            let installer = RegionInstaller(
                directory: directory, state: state,
                downloader: PackageDownloader(client: HTTPClient(), retry: RetryPolicy(maxAttempts: 1, initialDelay: 0, sleep: { _ in })),
                appVersion: try AppVersion(BuildInfo.version), freeSpace: freeSpace ?? freeDiskSpace(at:))
            let stopping = self.stopping
            installer.isStopping = { stopping.withLock { $0 } }
            let gate = Gate(store: try GateStore(stateFolder: work.file("state"), directory: directory), settings: .unreachable, clock: .system, installed: try AppVersion(BuildInfo.version))
            let region = try #require(catalog.region("alpha"))
            return try installer.sync(
                region, from: catalog, authorization: try gate.authorizeUse(), lock: try DirectoryLock(directory: directory), stage: stage,
                notice: { self.notices.append($0) })
        }

        var tiles: [TileKey: Data?] { get throws { try DeltaTestFiles.tiles(of: directory.regionPath("alpha")) } }
        var metadata: [String: String?] { get throws { try DeltaTestFiles.metadataWithoutHashes(of: directory.regionPath("alpha")) } }
    }

    @Test(arguments: [1, 2])
    func fromEachOlderVersionByDeltaToTheNewest(start: Int) throws {
        try publishVersions(upTo: start)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publishVersions(from: start + 1, upTo: 3)
        origin.clearRequests()
        let outcome = try client.sync()
        guard case .patched(let version, let previous, let downloaded, let fullSize) = outcome else {
            Issue.record("expected a delta, got \(outcome); notices: \(client.notices)")
            return
        }
        #expect(version == "3")
        #expect(previous == "\(start)")
        #expect(downloaded < fullSize / 2)
        #expect(!origin.requests.contains { $0.path.hasSuffix("alpha-3.mbtiles.gz") }, "the full package was not fetched")
        let fresh = try Client(baseURL: origin.baseURL)
        try fresh.sync()
        #expect(try client.tiles == (try fresh.tiles))
        #expect(try client.metadata["description"] == "v3")
        #expect(try client.metadata == (try fresh.metadata))
        #expect(try RegionLibrary(directory: client.directory, state: client.state).verify("alpha")?.isIntact == true)
        let record = try #require(try RegionRegistry(state: client.state).region("alpha"))
        #expect(record.contentHash == (try client.catalog().region("alpha")?.contentHash))
    }

    /// A client on version 1 of 21,845 small tiles, and version 2 published with every third tile
    /// changed: applied to version 1, its delta grows the file about a quarter (page splits).
    func clientOnAVersionADeltaGrows() throws -> (Client, [TileKey: Data?]) {
        var generator = SeededGenerator(seed: 9)
        let first = DeltaTestFiles.pyramid(maxZoom: 7, png: true, seed: 7)
        var second = first
        for (index, key) in first.keys.sorted().enumerated() where index % 3 == 0 {
            second[key] = .some(DeltaTestFiles.tileBytes(png: true, size: 300, using: &generator))
        }
        try publish.writeRegion("alpha.mbtiles", tiles: first, metadata: ["version": "1"])
        try publish.publish()
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publish.writeRegion("alpha.mbtiles", tiles: second, metadata: ["version": "2"])
        try publish.publish()
        return (client, second)
    }

    /// A delta's changes split the pages they land in: a region updated by delta grew past the
    /// catalog's `installedSize`, which the space checks count on (found by an attack: 1.7× its
    /// full install after five deltas of a tippecanoe region). Past an eighth over it, the result
    /// is rewritten compact before it is checked and installed.
    @Test func aRegionUpdatedByDeltaIsNoLargerThanItsFullInstall() throws {
        let (client, _) = try clientOnAVersionADeltaGrows()
        let outcome = try client.sync()
        guard case .patched = outcome else {
            Issue.record("expected a delta, got \(outcome); notices: \(client.notices)")
            return
        }
        let fresh = try Client(baseURL: origin.baseURL)
        try fresh.sync()
        #expect(try client.tiles == (try fresh.tiles))
        let installedSize = try #require(try client.catalog().region("alpha")).installedSize
        let size = try #require(try FileManager.default.attributesOfItem(atPath: client.directory.regionPath("alpha"))[.size] as? Int)
        #expect(Int64(size) <= installedSize + installedSize / 8, "\(size) bytes installed by the delta, \(installedSize) by the full package")
        #expect(try RegionLibrary(directory: client.directory, state: client.state).verify("alpha")?.isIntact == true)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: client.directory.partialPath).filter { $0.hasPrefix("alpha.") && $0.hasSuffix(".mbtiles") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Without room for the compact copy (about the full package's size) the grown result is
    /// installed as it is, and the run says so (found by an attack: silently, and with the room
    /// asked for being the grown file's, more than the copy needs).
    @Test func aGrownResultWithoutRoomToCompactIsInstalledAndSaid() throws {
        let (client, second) = try clientOnAVersionADeltaGrows()
        // The disk's own free space, but next to nothing once the delta's result is there.
        let patching = client.directory.patchingPath("alpha")
        client.freeSpace = { _ in FileManager.default.fileExists(atPath: patching) ? 4096 : nil }
        let outcome = try client.sync()
        guard case .patched = outcome else {
            Issue.record("expected a delta, got \(outcome); notices: \(client.notices)")
            return
        }
        #expect(client.notices.count == 1 && client.notices[0].contains("could not be made compact (") && client.notices[0].contains(" free, and a compact copy needs about"), "\(client.notices)")
        #expect(try client.tiles == second)
        #expect(try RegionLibrary(directory: client.directory, state: client.state).verify("alpha")?.isIntact == true)
    }

    /// Two versions with the same tiles and other metadata (an attribution changed): a client on
    /// the first takes the delta from its own version, never the one from the second, whose tiles
    /// hash alike (found by an attack: it kept the first's attribution under the new version).
    @Test func aDeltaIsTakenOnlyFromTheInstalledVersion() throws {
        try publish.writeRegion("alpha.mbtiles", tiles: versions[0], metadata: ["version": "1", "attribution": "old"])
        try publish.publish { $0.keep = 3 }
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publish.writeRegion("alpha.mbtiles", tiles: versions[0], metadata: ["version": "2", "attribution": "new"])
        try publish.publish { $0.keep = 3 }
        try publish.writeRegion("alpha.mbtiles", tiles: versions[1], metadata: ["version": "3", "attribution": "new"])
        try publish.publish { $0.keep = 3 }
        let offered = try #require(try client.catalog().region("alpha")).deltas.map(\.fromVersion)
        #expect(offered.contains("1") && offered.contains("2"), "\(offered)")
        let outcome = try client.sync()
        guard case .patched(_, let previous, _, _) = outcome else {
            Issue.record("expected a delta, got \(outcome); notices: \(client.notices)")
            return
        }
        #expect(previous == "1")
        let metadata = try client.metadata
        #expect(metadata["attribution"] == "new", "\(metadata)")
        #expect(try client.tiles == versions[1])
    }

    @Test func aRegionChangedLocallyTakesTheFullPackage() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        // The file no longer matches its recorded content hash: record a different one.
        try client.state.database.execute("UPDATE regions SET content_hash = '00000000000000000000000000000000'")
        try publishVersions(from: 2, upTo: 2)
        guard case .installed = try client.sync() else { Issue.record("expected the full package"); return }
        // No delta matched: nothing to fall back from, but why no delta was used is said.
        #expect(client.notices.count == 1 && client.notices[0].contains("recorded as 00000000000000000000000000000000"), "\(client.notices)")
    }

    /// A catalog that does not name the result's content hash gets no delta used: a delta for an
    /// older version (here version 2's, offered for version 3) would otherwise install as it says.
    @Test func noDeltaWithoutTheCatalogsContentHash() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publishVersions(from: 2, upTo: 2)
        let older = try #require(try client.catalog().region("alpha")?.deltas.first)
        try publishVersions(from: 3, upTo: 3)
        var catalog = try client.catalog()
        let index = try #require(catalog.regions.firstIndex { $0.id == "alpha" })
        catalog.regions[index].contentHash = nil
        catalog.regions[index].deltas = [older]

        guard case .installed(let version, _, _, _) = try client.sync(catalog: catalog) else { Issue.record("expected the full package"); return }

        #expect(version == "3")
        #expect(client.notices.isEmpty, "\(client.notices)")
        let fresh = try Client(baseURL: origin.baseURL)
        try fresh.sync()
        #expect(try client.tiles == (try fresh.tiles))
    }

    /// The installed file itself edited behind mapgate's back (its record unchanged): it is not
    /// the file its record describes, so no delta is applied onto it (issue 40), and the full
    /// package installs.
    @Test func anInstalledFileEditedInPlaceFallsBackToTheFullPackage() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        let edit = try SQLiteDatabase(path: client.directory.regionPath("alpha"), mode: .readWriteCreate)
        try edit.execute("UPDATE tiles SET tile_data = tile_data || X'00'")  // every tile, so the delta cannot cover it
        try publishVersions(from: 2, upTo: 2)

        let outcome = try client.sync()

        guard case .installed(let version, _, _, _) = outcome else { Issue.record("expected the full package, got \(outcome)"); return }
        #expect(version == "2")
        #expect(client.notices.count == 1, "\(client.notices)")
        #expect(client.notices.first?.contains("is not the one recorded for version 1") == true, "\(client.notices)")
        let fresh = try Client(baseURL: origin.baseURL)
        try fresh.sync()
        #expect(try client.tiles == (try fresh.tiles))
        #expect(try RegionLibrary(directory: client.directory, state: client.state).verify("alpha")?.isIntact == true)
    }

    /// A trigger in the installed file (put there by its package, or by hand) never runs when a
    /// delta is applied to it: an `AFTER INSERT` trigger could write anything, or loop forever.
    @Test func triggersInTheInstalledFileNeverFire() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        let edit = try SQLiteDatabase(path: client.directory.regionPath("alpha"), mode: .readWriteCreate)
        try edit.execute(
            """
            CREATE TRIGGER marker AFTER INSERT ON tiles BEGIN INSERT INTO metadata (name, value) VALUES ('fired', 'yes'); END;
            CREATE TRIGGER remover AFTER DELETE ON tiles BEGIN DELETE FROM metadata WHERE name = 'description'; END;
            """)
        // As if its package had carried them: the record describes the file as it now is (a file
        // changed behind the record's back gets no delta at all).
        let path = client.directory.regionPath("alpha")
        let stamp = try #require(RegionFileStamp(path: path))
        try client.state.database.execute(
            "UPDATE regions SET sha256 = ?, size = ?, file_modified = ?, file_inode = ? WHERE id = 'alpha'",
            [.text(try SHA256Hasher.hex(ofFileAt: path)), .integer(stamp.size), .integer(stamp.modified), .integer(Int64(bitPattern: stamp.inode))])
        try publishVersions(from: 2, upTo: 2)

        guard case .patched = try client.sync() else { Issue.record("expected the delta; notices: \(client.notices)"); return }

        #expect(try client.metadata["fired"] == nil, "a trigger fired")
        #expect(try client.metadata["description"] == "v2")
    }

    /// The published delta with `sql` run on it, packed again and served in its place (the
    /// catalog entry's size and SHA-256 follow it, as a hostile publisher's would).
    func tamper(_ delta: inout CatalogDelta, with sql: String) throws {
        let name = try #require(delta.url.components(separatedBy: "/packages/").last)
        let packed = try Data(contentsOf: URL(fileURLWithPath: publish.output + "/packages/" + name))
        let work = try TemporaryDirectory()
        let file = work.file("delta.mbtiles")
        try GzipInflater.decompress(packed).write(to: URL(fileURLWithPath: file))
        try SQLiteDatabase(path: file, mode: .readWriteCreate).execute(sql)
        let tampered = try GzipDeflater.compress(try Data(contentsOf: URL(fileURLWithPath: file)))
        try tampered.write(to: URL(fileURLWithPath: publish.output + "/packages/tampered.gz"))
        delta.url = origin.baseURL + "/packages/tampered.gz"
        delta.size = Int64(tampered.count)
        delta.sha256 = try SHA256Hasher.hex(of: tampered)
    }

    /// A client with version 1 installed and version 2 published: the client, the catalog that
    /// offers 2, and the index of the region in it.
    func clientOnVersion1() throws -> (client: Client, catalog: Catalog, index: Int) {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publishVersions(from: 2, upTo: 2)
        let catalog = try client.catalog()
        return (client, catalog, try #require(catalog.regions.firstIndex { $0.id == "alpha" }))
    }

    /// A region installed from a catalog at odds with its own package (its `contentHash` is not
    /// the package's tiles, and a full package's is recorded without hashing them) cannot take the
    /// delta `publish` makes from it, which names the tiles' real hash: the full package comes,
    /// and the run says why instead of skipping the delta in silence (found by an attack).
    @Test func aDeltaForOtherTilesThanTheRecordsIsSaid() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        var first = try client.catalog()
        let index = try #require(first.regions.firstIndex { $0.id == "alpha" })
        first.regions[index].contentHash = "0123456789ABCDEF0123456789ABCDEF"
        try client.sync(catalog: first)
        try publishVersions(from: 2, upTo: 2)
        let delta = try #require(try client.catalog().region("alpha")?.deltas.first)
        let outcome = try client.sync()
        guard case .installed(version: "2", previous: "1", _, _) = outcome else { Issue.record("expected the full package, got \(outcome)"); return }
        #expect(
            client.notices == [
                "region alpha: the catalog's delta from 1 is for tiles \(delta.fromHash.uppercased()), and the installed 1's are recorded as 0123456789ABCDEF0123456789ABCDEF; downloading the full package"
            ], "\(client.notices)")
    }

    /// Each bad delta is refused quickly (a view without end included) and the full package
    /// installs: "wrong-result" changes a tile but keeps the hashes the delta claims (its
    /// agg_tiles_hash and its LtHash); the views
    /// replace its `tiles` or `metadata` table by a recursive CTE that never ends.
    /// "other-base" is a delta made for other tiles than the installed ones: refused as such,
    /// before it is applied (found by an attack: only the result's hash caught it).
    @Test(arguments: ["corrupt", "wrong-result", "404", "tiles-view", "metadata-view", "other-base"])
    func aBadDeltaFallsBackToTheFullPackage(fault: String) throws {
        var (client, catalog, index) = try clientOnVersion1()
        let delta = try #require(catalog.regions[index].deltas.first)
        switch fault {
        case "corrupt":
            // Same size and hash as declared would be needed to get past the download; declare
            // the hash of garbage served in its place.
            let garbage = Data(repeating: 0x42, count: Int(delta.size))
            try garbage.write(to: URL(fileURLWithPath: publish.output + "/packages/garbage.gz"))
            catalog.regions[index].deltas[0].url = origin.baseURL + "/packages/garbage.gz"
            catalog.regions[index].deltas[0].sha256 = try SHA256Hasher.hex(of: garbage)
        case "wrong-result":
            try tamper(
                &catalog.regions[index].deltas[0],
                with: "UPDATE tiles SET tile_data = x'00' || tile_data WHERE rowid = (SELECT min(rowid) FROM tiles WHERE tile_data IS NOT NULL)")
        case "other-base":
            try tamper(
                &catalog.regions[index].deltas[0],
                with: "UPDATE metadata SET value = '0123456789ABCDEF0123456789ABCDEF' WHERE name = 'agg_tiles_hash_before_apply'")
        case "tiles-view", "metadata-view":
            let table = fault == "tiles-view" ? "tiles" : "metadata"
            let columns =
                fault == "tiles-view"
                ? "7 AS zoom_level, x AS tile_column, 0 AS tile_row, zeroblob(1000) AS tile_data" : "'k' || x AS name, 'v' AS value"
            try tamper(
                &catalog.regions[index].deltas[0],
                with: """
                    DROP TABLE \(table);
                    CREATE VIEW \(table) AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c) SELECT \(columns) FROM c;
                    """)
        default:
            catalog.regions[index].deltas[0].url = origin.baseURL + "/_fault/status=404/packages/nothing.gz"
        }
        // The delta is refused; the full package (whose own checks are size and SHA-256) installs.
        let started = Date()
        let outcome = try? client.sync(catalog: catalog)
        #expect(Date().timeIntervalSince(started) < 30, "the bad delta held the sync for \(Date().timeIntervalSince(started)) s")
        guard case .installed = outcome else { Issue.record("expected the full package, got \(String(describing: outcome))"); return }
        #expect(client.notices.count == 1, "\(client.notices)")
        #expect(client.notices.first?.contains("downloading the full package") == true)
        if fault.hasSuffix("-view") {
            // Named by its URL, not by the file it was unpacked to.
            #expect(client.notices.first?.contains("(the delta \(catalog.regions[index].deltas[0].url): not a tile delta:") == true, "\(client.notices)")
        }
        if fault == "other-base" {
            #expect(client.notices.first?.contains("the delta is made for other tiles: it expects a base whose agg_tiles_hash is 0123456789ABCDEF") == true, "\(client.notices)")
        }
        if fault == "wrong-result" {
            // Caught by the apply, by the LtHash of the delta's changes (publish's deltas carry
            // it), before the result is validated: the result's tiles are not hashed whole.
            #expect(client.notices.first?.contains("the delta gives other tiles than it promises (the LtHash of its changes is") == true, "\(client.notices)")
        }
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: client.directory.partialPath)) ?? []
        #expect(!leftovers.contains { $0.contains("patching") || $0.contains("installing") }, "\(leftovers)")
    }

    /// A delta that keeps failing, over a link that drops: the full package's partial is kept
    /// while the delta is downloaded again, and the next run resumes it (found by an attack: the
    /// delta's download removed it as another package's, so the full package started from its
    /// first byte each run and never finished).
    @Test func aFailingDeltaLeavesTheFullPackagesPartialToResume() throws {
        var (client, catalog, index) = try clientOnVersion1()
        try tamper(
            &catalog.regions[index].deltas[0],
            with: "UPDATE tiles SET tile_data = x'00' || tile_data WHERE rowid = (SELECT min(rowid) FROM tiles WHERE tile_data IS NOT NULL)")
        let full = catalog.regions[index].url
        let half = catalog.regions[index].size / 2
        catalog.regions[index].url = full.replacingOccurrences(of: origin.baseURL, with: origin.baseURL + "/_fault/cut=\(half),times=1")
        #expect(throws: (any Error).self) { try client.sync(catalog: catalog) }
        origin.clearRequests()
        guard case .installed = try client.sync(catalog: catalog) else { Issue.record("not installed"); return }
        let ranges = origin.requests.filter { $0.path.hasSuffix(String(full.split(separator: "/").last ?? "")) && $0.range != "bytes=0-0" }.map(\.range)
        #expect(ranges == ["bytes=\(half)-"], "the full package started over: \(ranges)")
        #expect(try client.tiles == versions[1])
    }

    /// An update by delta whose file is in place but whose record cannot be saved (found by an
    /// attack: a full disk under the state database made the run throw the delta away and fetch
    /// the full package over an update that had worked): the run fails with the record's reason,
    /// fetches nothing more, keeps the delta, and the next run saves the record.
    @Test func aDeltaInPlaceWhoseRecordFailsIsNotFetchedAgainWhole() throws {
        try publishVersions(upTo: 1)
        let client = try Client(baseURL: origin.baseURL)
        try client.sync()
        try publishVersions(from: 2, upTo: 2)
        origin.clearRequests()
        // The record cannot be written: the installer's connection is made read-only once the
        // new file is in place.
        #expect(throws: (any Error).self) {
            try client.sync(stage: { stage in
                if stage == .recording { try? client.state.database.execute("PRAGMA query_only = ON") }
            })
        }
        try client.state.database.execute("PRAGMA query_only = OFF")
        #expect(client.notices.isEmpty, "fell back to the full package: \(client.notices)")
        #expect(!origin.requests.contains { $0.path.contains("alpha-2.mbtiles") }, "\(origin.requests.map(\.path))")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: client.directory.deltasPath)) ?? []
        #expect(kept.count == 1, "\(kept)")
        // The next run saves the record first (as `sync` does), and the region is version 2 with
        // nothing fetched.
        origin.clearRequests()
        try RegionLibrary(directory: client.directory, state: client.state).finishPendingInstalls(lock: try DirectoryLock(directory: client.directory))
        guard case .upToDate = try client.sync() else { Issue.record("not up to date"); return }
        #expect(!origin.requests.contains { $0.path.contains("/packages/") }, "\(origin.requests.map(\.path))")
        #expect(try client.tiles == versions[1])
    }

    /// A signal that stops the run while the delta is applied (the CLI removes the file being
    /// assembled, then ends the process) is not the delta's failure (found by an attack: Ctrl-C
    /// then threw the downloaded delta away, said the stop as "the delta could not be used" and
    /// started the full package's download): nothing more is fetched, the delta is kept, and the
    /// next run applies it without fetching it again.
    @Test func aStopWhileTheDeltaIsAppliedKeepsItAndFetchesNothingElse() throws {
        let (client, catalog, _) = try clientOnVersion1()
        origin.clearRequests()
        #expect(throws: (any Error).self) {
            try client.sync(catalog: catalog, stage: { stage in
                guard stage == .validating else { return }
                client.stopping.withLock { $0 = true }
                unlink(client.directory.patchingPath("alpha"))
            })
        }
        #expect(client.notices.isEmpty, "the stop was said as the delta's failure: \(client.notices)")
        client.stopping.withLock { $0 = false }
        try expectTheKeptDeltaToApply(client, catalog)
    }

    /// After a failure that was not the delta's: no full package was fetched and version 1 is
    /// still installed; the next run applies the kept delta, fetching nothing.
    func expectTheKeptDeltaToApply(_ client: Client, _ catalog: Catalog, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(!origin.requests.contains { $0.path.contains("alpha-2.mbtiles") }, "\(origin.requests.map(\.path))", sourceLocation: sourceLocation)
        #expect(try client.tiles == versions[0], sourceLocation: sourceLocation)
        origin.clearRequests()
        guard case .patched = try client.sync(catalog: catalog) else {
            Issue.record("not updated by the delta", sourceLocation: sourceLocation)
            return
        }
        #expect(!origin.requests.contains { $0.path.contains("/packages/") }, "fetched again: \(origin.requests.map(\.path))", sourceLocation: sourceLocation)
        #expect(try client.tiles == versions[1], sourceLocation: sourceLocation)
    }

    /// A delta whose result was checked against the catalog but could not be put in place (a
    /// regions folder the user cannot write, a failing disk) fails with that reason, and neither
    /// throws the delta away nor fetches the full package, which would meet the same fault (found
    /// by an attack: 64 MB fetched for a 13 MB update, and the delta again after the fix).
    @Test func aCheckedDeltaThatCannotBePutInPlaceIsKept() throws {
        let (client, catalog, _) = try clientOnVersion1()
        origin.clearRequests()
        // The pending record cannot be written: a folder with something in it stands at its name.
        let blocker = client.directory.regionsPath + "/.alpha.pending.json"
        let error = #expect(throws: RegionError.self) {
            try client.sync(catalog: catalog, stage: { stage in
                if stage == .installing { try? FileManager.default.createDirectory(atPath: blocker + "/x", withIntermediateDirectories: true) }
            })
        }
        #expect(error?.region == "alpha", "the region was not named: \(String(describing: error))")
        #expect(client.notices.isEmpty, "fell back to the full package: \(client.notices)")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: client.directory.partialPath)) ?? []
        #expect(!leftovers.contains { $0.contains("patching") || $0.contains("installing") }, "\(leftovers)")
        try FileManager.default.removeItem(atPath: blocker)
        try expectTheKeptDeltaToApply(client, catalog)
    }

    /// A disk with room for the delta and the region's size, as the catalog says them, but not
    /// for the copy the delta is applied to beside the unpacked delta: said before the copy, with
    /// the sizes (the space checked before the download counted the unpacked delta only as a
    /// bound), and the installed version is untouched.
    @Test func roomForTheCopyIsCheckedBeforeTheDeltaIsApplied() throws {
        let (client, catalog, index) = try clientOnVersion1()
        let region = catalog.regions[index]
        let delta = try #require(region.deltas.first)
        // Enough for the download's check (the delta and the region's installed size), with the
        // unpacked delta and what `partial/` holds taken from it once downloaded; never enough
        // for the full package.
        let partial = client.directory.partialPath
        client.freeSpace = { _ in
            let held = ((try? FileManager.default.contentsOfDirectory(atPath: partial)) ?? []).reduce(Int64(0)) {
                $0 + FileManager.default.sizeOfItem(atPath: partial + "/" + $1)
            }
            return delta.size + region.installedSize - held
        }
        let before = try client.tiles
        let error = #expect(throws: RegionError.self) { try client.sync(catalog: catalog) }
        #expect(client.notices.contains { $0.contains("to apply the delta") && $0.contains("a copy of the installed file") }, "\(client.notices) \(String(describing: error))")
        #expect(error?.kind == .io)
        #expect(try client.tiles == before)
    }

    /// A delta downloaded whole and refused gives its room back before the full package's space
    /// is checked (found by an attack: on a nearly full disk the delta's bytes, kept in
    /// `partial/`, kept the full package from fitting, in that run and every later one). The disk
    /// here has room for the full package and what `partial/` holds takes from it.
    @Test func aRefusedDeltaGivesItsRoomToTheFullPackage() throws {
        var (client, catalog, index) = try clientOnVersion1()
        try tamper(
            &catalog.regions[index].deltas[0],
            with: "UPDATE tiles SET tile_data = x'00' || tile_data WHERE rowid = (SELECT min(rowid) FROM tiles WHERE tile_data IS NOT NULL)")
        let region = catalog.regions[index]
        let partial = client.directory.partialPath
        client.freeSpace = { _ in
            let held = ((try? FileManager.default.contentsOfDirectory(atPath: partial)) ?? []).reduce(Int64(0)) {
                $0 + FileManager.default.sizeOfItem(atPath: partial + "/" + $1)
            }
            return region.size + region.installedSize - held
        }
        guard case .installed = try client.sync(catalog: catalog) else { Issue.record("the full package was not installed"); return }
        #expect(client.notices.first?.contains("downloading the full package") == true, "\(client.notices)")
    }
}
