import Foundation
import MapGate
import TestSupport
import Testing

/// What a careless or hurried publisher does to a published folder (found by an attack on
/// `mapgate publish`): two publishes at once, names that clash, an input written while it is
/// published, a lost `.publish/`, a cron job with nothing new, another key. Each ended in a
/// signed catalog that clients refused or that gave other tiles under one version; each is now
/// refused with nothing of the catalog changed, or done and said.
@Suite struct CarelessPublisherTests {
    let workspace: PublishWorkspace
    let tiles = DeltaTestFiles.pyramid(maxZoom: 4, png: true, seed: 7)

    init() throws {
        workspace = try PublishWorkspace()
    }

    @Test func aSecondPublishIntoTheSameFolderIsRefusedWhileTheFirstRuns() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let before = try workspace.snapshot()
        // Another publish holds the folder's lock.
        let held = try DirectoryLock(lockPath: workspace.output + "/.publish/lock", folder: workspace.output, timeout: 0)
        try workspace.writeRegion("beta.mbtiles", tiles: tiles, metadata: ["version": "1"])
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("another mapgate is changing \(workspace.output)")
        }
        #expect(try workspace.snapshot() == before, "the refused publish changed the folder")
        withExtendedLifetime(held) {}
    }

    @Test func twoRegionVersionsWithOnePackageNameAreRefused() throws {
        try workspace.writeRegion("a.mbtiles", tiles: tiles, metadata: ["version": "b-1"])
        try workspace.writeRegion("a-b.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "1"])
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("would both be packages/a-b-1.mbtiles.gz")
        }
        #expect(!workspace.exists("catalog.json") && !workspace.exists("packages"))
        // Against the history too: a version published before keeps its name.
        try FileManager.default.removeItem(atPath: workspace.input + "/a-b.mbtiles")
        try workspace.publish()
        try workspace.writeRegion("a-b.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "1"])
        let before = try workspace.snapshot()
        #expect(throws: PublishError.self) { try workspace.publish() }
        #expect(try workspace.snapshot() == before)
    }

    @Test func anInputWrittenWhileItIsPublishedIsRefused() throws {
        let path = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        var written = false
        let publisher = Publisher(options: workspace.options(), clock: workspace.time.clock)
        #expect {
            try publisher.publish(signingKey: workspace.secretKey, progress: { _, _, _ in
                guard !written else { return }
                written = true
                let update = try? runProcess("/usr/bin/sqlite3", [path, "UPDATE tiles SET tile_data = X'89504E470D0A1A0A00' WHERE zoom_level = 4"])
                #expect(update?.status == 0)
            })
        } throws: { error in
            errorMessage(error).contains("it changed while it was being published")
        }
        #expect(written)
        #expect(!workspace.exists("catalog.json") && !workspace.exists("packages/alpha-1.mbtiles.gz"))
    }

    /// A catalog that cannot be read, moved away as the error advised (or deleted), in a folder
    /// whose history shows it has published: the next publish started again at serial 1, which
    /// every client refuses as a rollback, and dropped the gate rules the catalog held, exit 0
    /// (found by an attack). It is refused, saying how to go on; with `--serial` above the last
    /// one it publishes.
    @Test func aLostCatalogIsNotStartedAgainAtSerialOne() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2"])
        try workspace.publish()
        #expect(try workspace.catalog().serial == 2)
        try Data("{ \"edited by hand".utf8).write(to: URL(fileURLWithPath: workspace.catalogPath))
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("not a catalog mapgate can read: put back the one last published")
        }
        try FileManager.default.removeItem(atPath: workspace.catalogPath)
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 3), metadata: ["version": "3"])
        let before = try workspace.snapshot()
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("it is missing, and \(workspace.output)/.publish/history.json shows this folder has published before")
        }
        #expect(try workspace.snapshot() == before, "the refused publish changed the folder")
        // A serial at or below the one the signature left beside it names is refused too (found by
        // the attack on this fix: `--serial 2` was signed after serial 2 had been).
        #expect {
            try workspace.publish { $0.serial = 2 }
        } throws: { error in
            errorMessage(error).contains("must be above the serial 2 that \(workspace.output)/catalog.json.minisig names")
        }
        try workspace.publish { $0.serial = 3 }
        #expect(try workspace.catalog().serial == 3)
        // A catalog edited by hand to have no serial would start again at 1: refused the same way.
        var edited = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: workspace.catalogPath))) as? [String: Any])
        edited["serial"] = nil
        try JSONSerialization.data(withJSONObject: edited).write(to: URL(fileURLWithPath: workspace.catalogPath))
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 4), metadata: ["version": "4"])
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("it has no serial, and \(workspace.output)/.publish/history.json shows this folder has published before")
        }
    }

    @Test func aLostHistoryDoesNotLetAVersionComeBackWithOtherTiles() throws {
        let path = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let package = try Data(contentsOf: URL(fileURLWithPath: workspace.output + "/packages/alpha-1.mbtiles.gz"))
        try FileManager.default.removeItem(atPath: workspace.output + "/.publish")
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(5, of: tiles, seed: 3), metadata: ["version": "1"])
        let before = try workspace.snapshot()
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("is in the published catalog with other tiles")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.output + "/packages/alpha-1.mbtiles.gz")) == package)
        #expect(try workspace.snapshot().filter { !$0.key.hasPrefix(".publish") } == before.filter { !$0.key.hasPrefix(".publish") })
        // The same file published again after the loss is fine; the same tiles in a file of other
        // bytes are not (its package would replace the one the catalog lists, in place).
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1", "description": "rewritten"])
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("is already there with other bytes")
        }
        try original.write(to: URL(fileURLWithPath: path))
        try workspace.publish()
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.output + "/packages/alpha-1.mbtiles.gz")) == package)
    }

    @Test func aCatalogPastHalfItsValidityIsSignedAgainWithNothingNew() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        workspace.time.advance(days: 10)
        #expect(try workspace.publish().catalogChanged == false, "20 of 30 days left: left as it is")
        workspace.time.advance(days: 6)
        let renewed = try workspace.publish()
        #expect(renewed.catalogChanged && renewed.serial == 2)
        #expect(renewed.notes.contains { $0.contains("signed again with a new expiry") }, "\(renewed.notes)")
        #expect(try workspace.catalog().expires == workspace.time.now.addingTimeInterval(30 * 86_400))
        workspace.time.advance(days: 60)
        let expired = try workspace.publish()
        #expect(expired.serial == 3 && expired.notes.contains { $0.contains("the catalog expired on") }, "\(expired.notes)")
    }

    @Test func signingWithAnotherKeyIsSaid() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let other = try workspace.minisign.generateKeyPair(named: "other")
        let otherKey = try MinisignSecretKey(text: try other.secretKeyText, password: nil)
        let report = try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: otherKey)
        #expect(report.catalogChanged)
        let old = workspace.secretKey.publicKey.keyID.hex
        #expect(report.notes.contains { $0.contains("the previous catalog by key \(old)") }, "\(report.notes)")
        // Signing again with the same key says nothing.
        #expect(try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: otherKey).notes.isEmpty)
    }

    /// Options and files that published something no client can use (found by an attack): a
    /// base URL without a host or with a space, an output folder that is a link to the input
    /// folder, a regions.json naming one file twice.
    @Test func optionsAndOverridesThatCannotWorkAreRefused() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        for url in ["https://", "http:///packages", "https://cdn.example/my maps", "https://cdn.example:99999/maps", "http://cdn.example:0/",
            "http://127.0.0.1:99999999999999999999/", "http://127.0.0.1:18446744073709551697/", "https://user:pw@cdn.example/maps",
        ] {
            #expect(throws: PublishError.self, "\(url)") { try workspace.publish { $0.baseURL = url } }
        }
        // A port no client can reach is named as the port (found by an attack: 99999 was signed).
        #expect {
            try workspace.publish { $0.baseURL = "https://cdn.example:99999/maps" }
        } throws: { error in
            errorMessage(error).contains("port 99999 is not one of 1…65535")
        }
        // A port past Int's range (Foundation gives none) is read from the text (found by an attack).
        #expect {
            try workspace.publish { $0.baseURL = "http://127.0.0.1:99999999999999999999/" }
        } throws: { error in
            errorMessage(error).contains("port 99999999999999999999 is not one of 1…65535")
        }
        #expect {
            try workspace.publish { $0.baseURL = "https://user:pw@cdn.example/maps" }
        } throws: { error in
            errorMessage(error).contains("must not hold a user name or password")
        }
        try workspace.publish { $0.baseURL = "http://[::1]:8080/maps" }
        try FileManager.default.removeItem(atPath: workspace.output)
        try workspace.publish { $0.baseURL = "https://cdn.example:8443/maps" }
        #expect(try String(contentsOfFile: workspace.output + "/catalog.json", encoding: .utf8).contains("https://cdn.example:8443/maps/packages/"))
        try FileManager.default.removeItem(atPath: workspace.output)
        let link = workspace.work.file("out-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: workspace.input)
        #expect {
            try Publisher(options: PublishOptions(inputDirectory: workspace.input, outputDirectory: link), clock: workspace.time.clock)
                .publish(signingKey: workspace.secretKey)
        } throws: { error in
            errorMessage(error).contains("must not be the input folder")
        }
        try Data(#"{"alpha.mbtiles": {"version": "1"}, "alpha.mbtiles": {"version": "2"}}"#.utf8).write(to: URL(fileURLWithPath: workspace.input + "/regions.json"))
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("the key \"alpha.mbtiles\" appears twice")
        }
        #expect(!workspace.exists("catalog.json"))
    }

    /// A package cut short on the host (found by an attack: publish said "unchanged" of it) is
    /// made again from its input, the same bytes as before.
    @Test func aPackageCutShortIsMadeAgain() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let path = workspace.output + "/packages/alpha-1.mbtiles.gz"
        let package = try Data(contentsOf: URL(fileURLWithPath: path))
        try package.prefix(100).write(to: URL(fileURLWithPath: path))
        try workspace.publish()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == package)
    }

    /// A package replaced on the host by other bytes of the same size, or by a link to a copy of
    /// itself (found by an attack: only sizes were compared, so publish kept saying "no change"
    /// while every client's download failed its SHA-256): made again, and said.
    @Test(arguments: ["same size", "link"])
    func aPackageThatIsNotItsOwnIsMadeAgain(kind: String) throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let path = workspace.output + "/packages/alpha-1.mbtiles.gz"
        let package = try Data(contentsOf: URL(fileURLWithPath: path))
        if kind == "link" {
            let copy = workspace.output + "/copy.gz"
            try package.write(to: URL(fileURLWithPath: copy))
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: copy)
        } else {
            try Data(repeating: 0x41, count: package.count).write(to: URL(fileURLWithPath: path))
        }
        var notes: [String] = []
        _ = try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: workspace.secretKey, onEvent: { event in
            if case .note(let note) = event { notes.append(note) }
        })
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == package)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "still a link")
        #expect(notes.contains { $0.contains("packages/alpha-1.mbtiles.gz") && $0.contains("made again") }, "\(notes)")
    }

    /// A damaged package of a version with deltas made again (found by an attack: a delta "from 2
    /// to 2" was signed into the catalog beside the one from 1): the same bytes, the same deltas.
    @Test func aPackageMadeAgainGetsNoDeltaFromItself() throws {
        let path = try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        try FileManager.default.removeItem(atPath: path)
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2"])
        try workspace.publish()
        let catalog = workspace.output + "/catalog.json"
        func deltas() throws -> [String] {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: catalog))) as? [String: Any]
            let region = (json?["regions"] as? [[String: Any]])?.first { $0["id"] as? String == "alpha" }
            return ((region?["deltas"] as? [[String: Any]]) ?? []).compactMap { $0["fromVersion"] as? String }
        }
        #expect(try deltas() == ["1"])
        let package = workspace.output + "/packages/alpha-2.mbtiles.gz"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: package))
        try bytes.prefix(100).write(to: URL(fileURLWithPath: package))
        try workspace.publish()
        #expect(try Data(contentsOf: URL(fileURLWithPath: package)) == bytes)
        #expect(try deltas() == ["1"])
        #expect(!workspace.exists("packages/alpha-2-to-2.delta.mbtiles.gz"))
        // A delta the catalog lists, cut short, is made again too (it stayed, and every client
        // fetched it and fell back to the whole package).
        let delta = workspace.output + "/packages/alpha-1-to-2.delta.mbtiles.gz"
        let deltaBytes = try Data(contentsOf: URL(fileURLWithPath: delta))
        try deltaBytes.prefix(10).write(to: URL(fileURLWithPath: delta))
        try workspace.publish()
        #expect(try Data(contentsOf: URL(fileURLWithPath: delta)) == deltaBytes)
        #expect(try deltas() == ["1"])
    }

    /// A version ending in `.delta` would name its package as a delta is (found by an attack:
    /// region `a-1-to` version `2.delta` and region `a`'s delta from 1 to 2 were one file, and a
    /// later publish removed the one the catalog listed): refused before anything is written.
    @Test func aVersionNamedAsADeltaIsRefused() throws {
        try workspace.writeRegion("a-1-to.mbtiles", tiles: tiles, metadata: ["version": "2.delta"])
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("version \"2.delta\" ends in .delta")
        }
        #expect(!workspace.exists("catalog.json") && !workspace.exists("packages"))
    }

    /// Two deltas with one file name (found by an attack: region `a` version `2-to-3` and region
    /// `a-1-to` version `3`, each from its version before, are both `a-1-to-2-to-3.delta…`, and
    /// the catalog listed that one file for both, with two sizes; within one region, versions `1`,
    /// `1-to-2`, `2-to-3`, `3` did the same and a trim removed a delta the catalog listed):
    /// refused before anything is written, naming both.
    @Test func twoDeltasWithOneFileNameAreRefused() throws {
        try workspace.writeRegion("a.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.writeRegion("a-1-to.mbtiles", tiles: tiles, metadata: ["version": "2"])
        try workspace.publish()
        try workspace.writeRegion("a.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2-to-3"])
        try workspace.writeRegion("a-1-to.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 4), metadata: ["version": "3"])
        let before = try workspace.snapshot()
        #expect {
            try workspace.publish()
        } throws: { error in
            errorMessage(error).contains("would both be packages/a-1-to-2-to-3.delta.mbtiles.gz")
        }
        #expect(try workspace.snapshot() == before, "the refused publish changed the folder")
    }
}
