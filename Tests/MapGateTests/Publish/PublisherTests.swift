import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct PublisherTests {
    let workspace: PublishWorkspace
    let tiles = DeltaTestFiles.pyramid(maxZoom: 4, png: true, seed: 1)

    init() throws {
        workspace = try PublishWorkspace()
    }

    @Test func publishesACatalogThatParsesAndVerifies() throws {
        let alpha = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["name": "Alpha", "version": "1", "bounds": "-10,-20,30,40"])
        let cities = workspace.input + "/cities.mbtiles"
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: cities)

        let report = try workspace.publish()
        #expect(report.catalogChanged)
        #expect(report.serial == 1)
        #expect(report.regions.map(\.action) == [.added, .added])

        let catalog = try workspace.catalog()
        #expect(catalog.serial == 1)
        #expect(catalog.publisher == "mapgate publish")
        #expect(catalog.expires == workspace.time.now.addingTimeInterval(30 * 86_400))
        #expect(catalog.regions.map(\.id) == ["alpha", "cities"])
        let region = try #require(catalog.region("alpha"))
        #expect(region.name == "Alpha")
        #expect(region.version == "1")
        #expect(region.format == .png)
        #expect(region.minzoom == 0 && region.maxzoom == 4)
        #expect(region.bounds == [-10, -20, 30, 40])
        #expect(region.contentHash == (try TilesetHash.compute(ofFileAt: alpha).hex))
        #expect(region.installedSize == (try CatalogBuilder.size(alpha)))
        #expect(region.url.hasSuffix("/out/packages/alpha-1.mbtiles.gz"))
        let package = workspace.output + "/packages/alpha-1.mbtiles.gz"
        #expect(region.size == (try CatalogBuilder.size(package)))
        #expect(region.sha256 == (try SHA256Hasher.hex(ofFileAt: package)))
        let unpacked = try workspace.gunzip("packages/alpha-1.mbtiles.gz", to: "alpha.check")
        #expect(try Data(contentsOf: URL(fileURLWithPath: unpacked)) == (try Data(contentsOf: URL(fileURLWithPath: alpha))))
        let vector = try #require(catalog.region("cities"))
        #expect(vector.format == .pbf)
        #expect(vector.version == "2")
        #expect(vector.name == "Major cities from Natural Earth data")

        // mapgate's own verifier and the real minisign both accept the signature.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: workspace.catalogPath))
        let signature = try Data(contentsOf: URL(fileURLWithPath: workspace.catalogPath + ".minisig"))
        let verification = try MinisignVerifier(trustedKeys: [workspace.secretKey.publicKey]).verify(signatureFile: signature, message: bytes)
        #expect(verification.trustedComment.contains("serial:1"))
        let real = try workspace.minisign.run(["-V", "-p", workspace.keys.publicKeyFile, "-m", workspace.catalogPath])
        #expect(real.status == 0, "\(real.stderr)")
    }

    @Test func noChangeLeavesEveryByteAsItWas() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let before = try workspace.snapshot()
        workspace.time.advance(days: 3)
        let again = try workspace.publish()
        #expect(!again.catalogChanged)
        #expect(again.serial == 1)
        #expect(again.regions.map(\.action) == [.unchanged])
        #expect(try workspace.snapshot() == before)

        // An explicit serial always makes a new catalog (how an unchanged one is renewed).
        let renewed = try workspace.publish { $0.serial = 7 }
        #expect(renewed.catalogChanged)
        #expect(try workspace.catalog().serial == 7)
        #expect(throws: PublishError.self) { try workspace.publish { $0.serial = 7 } }
    }

    @Test func aNewVersionRaisesTheSerialAndListsACheckedDelta() throws {
        let first = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let firstHash = try TilesetHash.compute(ofFileAt: first).hex
        let firstCopy = workspace.work.file("alpha-1.mbtiles")
        try FileManager.default.copyItem(atPath: first, toPath: firstCopy)

        let second = try workspace.writeRegion(
            "alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2"])
        let report = try workspace.publish()
        #expect(report.serial == 2)
        let row = try #require(report.regions.first)
        #expect(row.action == .updated)
        #expect(row.previousVersion == "1")
        #expect(row.deltaCount == 1)

        let region = try #require(try workspace.catalog().region("alpha"))
        #expect(region.version == "2")
        let delta = try #require(region.deltas.first)
        #expect(delta.fromVersion == "1")
        #expect(delta.fromHash == firstHash)
        #expect(delta.url.hasSuffix("/packages/alpha-1-to-2.delta.mbtiles.gz"))
        #expect(delta.size * 2 <= region.size)
        #expect(delta.sha256 == (try SHA256Hasher.hex(ofFileAt: workspace.output + "/packages/alpha-1-to-2.delta.mbtiles.gz")))
        // A client's use of it: unpacked and applied to version 1, it gives version 2's tiles.
        let unpacked = try workspace.gunzip("packages/alpha-1-to-2.delta.mbtiles.gz", to: "delta.mbtiles")
        try MBTilesDelta.apply(delta: unpacked, to: firstCopy)
        #expect(try TilesetHash.compute(ofFileAt: firstCopy).hex == region.contentHash)
        #expect(region.contentHash == (try TilesetHash.compute(ofFileAt: second).hex))
        // The previous version's package stays for clients that still hold the previous catalog.
        #expect(workspace.exists("packages/alpha-1.mbtiles.gz"))
    }

    /// A version published from a UTF-16 file gets no delta, and the note says what to change in
    /// the input; the next version, from a UTF-8 file, gets none from it either, and the note says
    /// so of the version, not of publish's own copy of it (found by an attack: its advice named
    /// `.publish/bases/…`, which the publisher cannot change).
    @Test func aUTF16VersionGetsNoDeltaAndTheNoteNamesWhatToChange() throws {
        let path = try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 3, png: true, seed: 1), metadata: ["version": "1"])
        try workspace.publish()
        let utf8 = workspace.work.file("alpha-utf8.mbtiles")
        try FileManager.default.moveItem(atPath: path, toPath: utf8)
        let converted = try runProcess(
            "/bin/sh", ["-c", "(echo \"PRAGMA encoding = 'UTF-16le';\"; sqlite3 '\(utf8)' .dump; echo \"UPDATE metadata SET value = '2' WHERE name = 'version'; DELETE FROM tiles WHERE zoom_level = 3 AND tile_column = 0;\") | sqlite3 '\(path)'"])
        #expect(converted.status == 0, "\(converted.stderr)")
        let second = try workspace.publish()
        #expect(second.notes.contains { $0.contains("region alpha: no delta from 1 to 2: \(path): its text encoding is UTF-16le") && $0.contains("publish a UTF-8 copy of it") }, "\(second.notes)")
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 3, png: true, seed: 2), metadata: ["version": "3"])
        let third = try workspace.publish()
        let note = third.notes.first { $0.contains("no delta from 2 to 3") }
        #expect(note?.contains("version 2 was published from a file no delta can start from (its text encoding is UTF-16le") == true, "\(third.notes)")
        #expect(note?.contains(".publish") == false, "\(third.notes)")
    }

    /// A delta carries no NULL value (its NULL removes the entry) and one row per name: a new
    /// version whose changes hold either would be another file after the delta than after the
    /// full package, so its delta is left out and the note says which entry and what to change
    /// (found by an attack: an attribution given twice, once NULL, as node-mbtiles and GDAL files
    /// can hold, was removed by the delta for good, and a NULL entry vanished). The NULL entry of
    /// the real fixture's kind (`formatter`), unchanged between the versions, keeps the delta.
    @Test(arguments: ["twoValues", "nullAdded", "unchangedNull"])
    func aDeltaThatWouldGiveOtherMetadataIsLeftOut(_ variant: String) throws {
        let path = try workspace.writeRegion(
            "alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 6, png: true, seed: 1),
            metadata: ["version": "1", "attribution": "(c) OSM", "formatter": nil])
        try workspace.publish()
        try workspace.writeRegion(
            "alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: DeltaTestFiles.pyramid(maxZoom: 6, png: true, seed: 1), seed: 2),
            metadata: ["version": "2", "attribution": "(c) OSM", "formatter": nil])
        let edit: String? =
            switch variant {
            case "twoValues": "DROP INDEX name; INSERT INTO metadata VALUES ('attribution', NULL)"
            case "nullAdded": "INSERT INTO metadata VALUES ('legend', NULL)"
            default: nil
            }
        if let edit { #expect(try runProcess("/usr/bin/sqlite3", [path, edit]).status == 0) }
        let report = try workspace.publish()
        let deltas = try #require(try workspace.catalog().region("alpha")).deltas
        let note = report.notes.first { $0.contains("no delta from 1 to 2") }
        switch variant {
        case "twoValues":
            #expect(deltas.isEmpty)
            #expect(note?.contains("gives other metadata than the file's (\"attribution\" is NULL, \"(c) OSM\" in the file, missing after the delta)") == true, "\(report.notes)")
        case "nullAdded":
            #expect(deltas.isEmpty)
            #expect(note?.contains("(\"legend\" is NULL in the file, missing after the delta); a delta cannot carry a NULL value") == true, "\(report.notes)")
        default:
            #expect(deltas.count == 1, "\(report.notes)")
            #expect(note == nil, "\(report.notes)")
        }
    }

    /// The deltas are made after every package, and were made from the inputs as they were then:
    /// an input written after its own package (while another region was packed) put its new
    /// metadata in the signed delta and kept the old in the package, which a tile hash cannot
    /// tell (found by an attack). They are made from the version's base copy, taken with its package.
    @Test func aDeltaGivesWhatThePackageHoldsThoughTheInputWasWrittenSince() throws {
        let alpha = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1", "description": "one"])
        try workspace.writeRegion("beta.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let firstCopy = workspace.work.file("alpha-1.mbtiles")
        try FileManager.default.copyItem(atPath: alpha, toPath: firstCopy)
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2", "description": "two"])
        try workspace.writeRegion("beta.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 3), metadata: ["version": "2"])
        var packed: [String] = []
        var written = false
        _ = try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(
            signingKey: workspace.secretKey,
            progress: { region, _, _ in
                guard region == "beta", packed.contains("alpha"), !written else { return }
                written = true
                #expect(try! runProcess("/usr/bin/sqlite3", [alpha, "UPDATE metadata SET value = 'edited' WHERE name = 'description'"]).status == 0)
            },
            onEvent: { if case .packed(let region, _, _) = $0 { packed.append(region) } })
        #expect(written)
        let package = try workspace.gunzip("packages/alpha-2.mbtiles.gz", to: "alpha-2.mbtiles")
        #expect(try MBTilesFile(path: package).metadata()["description"] == "two")
        let delta = try workspace.gunzip("packages/alpha-1-to-2.delta.mbtiles.gz", to: "delta.mbtiles")
        try MBTilesDelta.apply(delta: delta, to: firstCopy)
        #expect(try MBTilesFile(path: firstCopy).metadata()["description"] == "two")
    }

    /// An input that is a symbolic link (followed, as documented) got a link as its base copy:
    /// dangling for a relative link, and the input itself for an absolute one, so the next
    /// version got no delta ("database is locked": base and target one file) (found by an attack).
    /// The base copy holds the file's bytes.
    @Test(arguments: [true, false])
    func aLinkedInputGetsACopyOfItsFileAsItsBase(relative: Bool) throws {
        let real = workspace.work.file("real.mbtiles")
        try DeltaTestFiles.write(real, tiles: tiles, metadata: ["format": "png", "version": "1"])
        try FileManager.default.createSymbolicLink(atPath: workspace.input + "/alpha.mbtiles", withDestinationPath: relative ? "../real.mbtiles" : real)
        #expect(FileManager.default.fileExists(atPath: workspace.input + "/alpha.mbtiles"), "the link must reach the file")
        try workspace.publish()
        let base = workspace.output + "/.publish/bases/alpha-1.mbtiles"
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: base)) == nil, "the base copy is a link")
        #expect(try TilesetHash.compute(ofFileAt: base).hex == (try TilesetHash.compute(ofFileAt: real).hex))
        try FileManager.default.removeItem(atPath: real)
        try DeltaTestFiles.write(real, tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["format": "png", "version": "2"])
        let report = try workspace.publish()
        #expect(try workspace.catalog().region("alpha")?.deltas.map(\.fromVersion) == ["1"], "\(report.notes)")
    }

    @Test func aDeltaOverHalfThePackageIsLeftOut() throws {
        // Over 256 KiB of package: worth a warning.
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 6, png: true, seed: 1), metadata: ["version": "1"])
        try workspace.publish()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 6, png: true, seed: 99), metadata: ["version": "2"])
        let report = try workspace.publish()
        #expect(try workspace.catalog().region("alpha").map { $0.size > 256 << 10 } == true)
        #expect(report.regions.first?.deltaCount == 0)
        #expect(report.notes.contains { $0.contains("region alpha: no delta from 1 to 2") && $0.contains("over half the full package") })
        #expect(try workspace.catalog().region("alpha")?.deltas == [])
        #expect(!workspace.exists("packages/alpha-1-to-2.delta.mbtiles.gz"))
    }

    /// A deduplicated file (`map` + `images`: 1,024 tiles sharing one image) whose shared image
    /// changes: its delta holds every changed tile on its own and unpacks to more than the region,
    /// which every client would download and refuse (found by an attack): left out, said why.
    @Test func aDeltaThatUnpacksToMoreThanTheRegionIsLeftOut() throws {
        func region(_ seed: UInt8) -> [TileKey: Data?] {
            let image = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<2_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
            var tiles: [TileKey: Data?] = [:]
            for x in 0..<32 { for y in 0..<32 { tiles[TileKey(5, x, y)] = image } }
            return tiles
        }
        let path = workspace.input + "/alpha.mbtiles"
        try DeltaTestFiles.write(path, layout: .normalized, tiles: region(1), metadata: ["format": "png", "version": "1"])
        try workspace.publish()
        try FileManager.default.removeItem(atPath: path)
        try DeltaTestFiles.write(path, layout: .normalized, tiles: region(2), metadata: ["format": "png", "version": "2"])
        let report = try workspace.publish()
        #expect(report.notes.contains { $0.contains("region alpha: no delta from 1 to 2") && $0.contains("more than the region's") }, "\(report.notes)")
        #expect(try workspace.catalog().region("alpha")?.deltas == [])
    }

    /// Issue 27: a tiny region's delta left out is not worth a warning.
    @Test func aTinyRegionsDeltaIsLeftOutWithoutAWord() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 4, png: true, seed: 99), metadata: ["version": "2"])
        let report = try workspace.publish()
        #expect(report.regions.first?.deltaCount == 0)
        #expect(!report.notes.contains { $0.contains("delta") }, "\(report.notes)")
        #expect(try workspace.catalog().region("alpha")?.deltas == [])
    }

    @Test func keepTrimsOlderVersions() throws {
        for version in 1...3 {
            try workspace.writeRegion(
                "alpha.mbtiles", tiles: DeltaTestFiles.changing(version, of: tiles, seed: UInt64(version)), metadata: ["version": "\(version)"])
            try workspace.publish { $0.keep = 2 }
        }
        #expect(!workspace.exists("packages/alpha-1.mbtiles.gz"))
        #expect(!workspace.exists(".publish/bases/alpha-1.mbtiles"))
        #expect(!workspace.exists("packages/alpha-1-to-2.delta.mbtiles.gz"))
        #expect(workspace.exists("packages/alpha-2.mbtiles.gz"))
        #expect(workspace.exists("packages/alpha-3.mbtiles.gz"))
        #expect(workspace.exists(".publish/bases/alpha-2.mbtiles"))
        #expect(workspace.exists(".publish/bases/alpha-3.mbtiles"))
        let region = try #require(try workspace.catalog().region("alpha"))
        #expect(region.deltas.map(\.fromVersion) == ["2"])
        #expect(try workspace.catalog().serial == 3)
        let history = try String(contentsOfFile: workspace.output + "/.publish/history.json", encoding: .utf8)
        #expect(history.contains("alpha-3.mbtiles.gz") && !history.contains("alpha-1.mbtiles.gz"))
    }

    @Test func aRemovedFileIsReportedAndLeavesTheCatalog() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let beta = try workspace.writeRegion("beta.mbtiles", tiles: tiles, metadata: ["version": "5"])
        try workspace.publish()
        try FileManager.default.removeItem(atPath: beta)
        let report = try workspace.publish()
        #expect(report.regions.map(\.action) == [.unchanged, .removed])
        #expect(report.regions.last?.id == "beta")
        #expect(try workspace.catalog().regions.map(\.id) == ["alpha"])
    }

    @Test func regionsJSONOverridesTheDerivedValues() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: [:])
        try workspace.work.write(
            "in/regions.json", #"{"alpha.mbtiles": {"id": "kr-seoul", "name": "Seoul", "version": "2026.11", "minimumAppVersion": "1.3"}}"#)
        try workspace.publish { $0.baseURL = "https://maps.example/offline/" }
        let region = try #require(try workspace.catalog().region("kr-seoul"))
        #expect(region.name == "Seoul")
        #expect(region.version == "2026.11")
        #expect(region.minimumAppVersion == "1.3")
        #expect(region.url == "https://maps.example/offline/packages/kr-seoul-2026.11.mbtiles.gz")
    }

    @Test func aDryRunWritesNothing() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let report = try Publisher(options: workspace.options(), clock: workspace.time.clock).plan()
        #expect(report.isDryRun)
        #expect(report.catalogChanged)
        #expect(report.regions.map(\.action) == [.added])
        #expect(report.regions.first?.size == nil)
        #expect(!FileManager.default.fileExists(atPath: workspace.output))
    }

    @Test func aChangedFileUnderAPublishedVersionIsRefused() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(2, of: tiles, seed: 5), metadata: ["version": "1"])
        let error = try #require(throws: PublishError.self) { try workspace.publish() }
        #expect(error.errorDescription?.contains("alpha.mbtiles: version \"1\" of region alpha was published before from another file") == true)
    }

    enum BadInput: String, CaseIterable, Sendable {
        case notSQLite, noTiles, badID, noVersion, badBounds, unknownOverrideKey, blankName
    }

    @Test(arguments: BadInput.allCases)
    func badInputsAreClearErrorsNamingTheFile(_ input: BadInput) throws {
        let expected: (file: String, reason: String)
        switch input {
        case .notSQLite:
            try workspace.work.write("in/broken.mbtiles", String(repeating: "not a database\n", count: 200))
            expected = ("broken.mbtiles", "not a readable SQLite file")
        case .noTiles:
            try workspace.writeRegion("empty.mbtiles", tiles: [:], metadata: ["version": "1"])
            expected = ("empty.mbtiles", "it holds no tiles")
        case .badID:
            try workspace.writeRegion("Bad_ID.mbtiles", tiles: tiles, metadata: ["version": "1"])
            expected = ("Bad_ID.mbtiles", "region id from the file name is not valid: \"Bad_ID\"")
        case .noVersion:
            try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: [:])
            expected = ("alpha.mbtiles", "no version: set metadata \"version\"")
        case .badBounds:
            try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1", "bounds": "-190,0,10,10"])
            expected = ("alpha.mbtiles", "bounds \"-190,0,10,10\" are not finite")
        case .unknownOverrideKey:
            try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
            try workspace.work.write("in/regions.json", #"{"alpha.mbtiles": {"colour": "red"}}"#)
            expected = ("regions.json", "\"alpha.mbtiles\": unknown key \"colour\"")
        case .blankName:
            // Found by an attack: a name of spaces was published, and shown as nothing in `catalog`.
            try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
            try workspace.work.write("in/regions.json", #"{"alpha.mbtiles": {"name": "   "}}"#)
            expected = ("regions.json", "\"alpha.mbtiles\": name must be a non-empty string")
        }
        let error = try #require(throws: PublishError.self) { try workspace.publish() }
        let message = error.errorDescription ?? ""
        #expect(message.contains(expected.file), "\(message)")
        #expect(message.contains(expected.reason), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: workspace.catalogPath))
        #expect(!workspace.exists("packages/alpha-1.mbtiles.gz"))
    }
}
