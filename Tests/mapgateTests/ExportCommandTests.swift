import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `mapgate export REGION FILE.pmtiles` (issue 39): an installed region as a PMTiles v3 archive
/// the reference reader reads byte for byte, written atomically, and a use of the gate like
/// `tile`: refused when the gate is closed, counted once on success, not counted on failure.
@Suite struct ExportCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    var work: TemporaryDirectory { workspace.work }

    init() throws {
        workspace = try CLIWorkspace()
        try workspace.publish(version: "1.5.0")
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        try workspace.offer("cities", fixture: "mbtileserver-world_cities.mbtiles", format: "pbf")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL, "maxPrompts": 2])
        #expect(try mapgate.run(["sync", "geo", "cities"], at: "2027-01-01 00:00:00").status == 0)
    }

    func promptsShown() throws -> Int? {
        let status = try mapgate.run(["status", "--json"], at: "2027-03-01 00:00:00")
        return try MapGateBinary.json(status.stdout)["promptsShown"] as? Int
    }

    func installed(_ id: String) throws -> [String: Data] {
        try PublishingWorkspace.tiles(mapgate.dataDirectory + "/regions/\(id).mbtiles")
    }

    @Test(.enabled(if: PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps"), arguments: ["geo", "cities"])
    func anExportedRegionIsReadByTheReferenceByteForByte(_ id: String) throws {
        let file = work.file("\(id).pmtiles")
        let result = try mapgate.run(["export", id, file], at: "2027-01-02 00:00:00")
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("exported \(id) to \(file):"), "\(result.stdout)")
        let tiles = try installed(id)
        #expect(try PMTilesReference.tiles(file) == tiles && !tiles.isEmpty)
        // Nothing else is left beside it, nor in the temporary folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.contains(".mapgate-") }.isEmpty)
    }

    /// A FILE inside mapgate's own folders (the installed region's file itself, a new name among
    /// the regions, the gate's state) would be replaced or added behind mapgate's back: refused
    /// before the gate counts anything, and the region stays installed and usable. `tile -o` alike.
    @Test func aFileInMapgatesOwnFoldersIsRefusedAndLosesNothing() throws {
        let regions = mapgate.dataDirectory + "/regions"
        let before = try installed("geo")
        let shown = try promptsShown()
        // Through a symbolic link too: what it points to is what would be replaced.
        let link = work.file("innocent.pmtiles")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: regions + "/geo.mbtiles")
        // A dangling link, and a chain ending in one, would create a new file among the regions
        // (found by an attack: `tile -o` wrote regions/evil.mbtiles through one, and counted a use).
        let dangling = work.file("dangling.pmtiles")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: regions + "/evil.mbtiles")
        let chain = work.file("chain.pmtiles")
        try FileManager.default.createSymbolicLink(atPath: chain, withDestinationPath: "dangling.pmtiles")
        for target in [regions + "/geo.mbtiles", regions + "/new.pmtiles", link, dangling, chain, mapgate.dataDirectory + "/x.pmtiles"] {
            let export = try mapgate.run(["export", "geo", target], at: "2027-03-01 00:00:00")
            #expect(export.status == 64, "\(target): \(export.stderr)")
            #expect(export.stderr.contains("mapgate's own folder"), "\(export.stderr)")
            let tile = try mapgate.run(["tile", "geo", "0", "0", "0", "-o", target], at: "2027-03-01 00:00:00")
            #expect(tile.status == 64, "\(target): \(tile.stderr)")
        }
        #expect(try installed("geo") == before)
        #expect(!FileManager.default.fileExists(atPath: regions + "/new.pmtiles"))
        #expect(!FileManager.default.fileExists(atPath: regions + "/evil.mbtiles"))
        #expect(try promptsShown() == shown)
        #expect(try mapgate.run(["verify", "geo"], at: "2027-03-01 00:00:00").status == 0)
    }

    /// A FILE named `.mbtiles` (found by an attack: a PMTiles archive was written under it
    /// without a word): a usage error before the gate, nothing written, nothing counted.
    @Test func aFileNamedMBTilesIsAUsageError() throws {
        let shown = try promptsShown()
        for name in ["geo.mbtiles", "GEO.MBTiles"] {
            let export = try mapgate.run(["export", "geo", work.file(name)], at: "2027-03-01 00:00:00")
            #expect(export.status == 64, "\(export.stderr)")
            #expect(export.stderr.contains("export writes a PMTiles v3 archive, not an MBTiles file: name it .pmtiles"), "\(export.stderr)")
            #expect(!FileManager.default.fileExists(atPath: work.file(name)))
        }
        // Nor one reached through a link named otherwise (found by the next attack: the MBTiles
        // file behind `link.pmtiles` was replaced by an archive).
        try "an MBTiles file\n".write(toFile: work.file("real.mbtiles"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: work.file("link.pmtiles"), withDestinationPath: "real.mbtiles")
        let linked = try mapgate.run(["export", "geo", work.file("link.pmtiles")], at: "2027-03-01 00:00:00")
        #expect(linked.status == 64, "\(linked.stderr)")
        #expect(try String(contentsOfFile: work.file("real.mbtiles"), encoding: .utf8) == "an MBTiles file\n")
        // A dangling one too: it would make the `.mbtiles` file.
        try FileManager.default.createSymbolicLink(atPath: work.file("dangling.pmtiles"), withDestinationPath: "new.mbtiles")
        #expect(try mapgate.run(["export", "geo", work.file("dangling.pmtiles")], at: "2027-03-01 00:00:00").status == 64)
        #expect(!FileManager.default.fileExists(atPath: work.file("new.mbtiles")))
        // `-o /dev/stdout` with standard output closed is that output, closed (74), as `-` is
        // (refused before anything else: no clock to fake).
        let closed = try runProcess(
            "/bin/sh", ["-c", "exec \"$@\" >&-", "sh", mapgate.path, "export", "geo", "/dev/stdout", "--config", mapgate.configPath,
                        "--data-dir", mapgate.dataDirectory], environment: mapgate.baseEnvironment)
        #expect(closed.status == 74 && closed.stderr.contains("it was closed when mapgate started"), "\(closed.stderr)")
        #expect(try promptsShown() == shown)
    }

    @Test(.enabled(if: PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps"))
    func anExportPublishedAgainInstallsTheSameTiles() throws {
        // Round trip through the CLI: installed MBTiles → export → publish → sync → the same tiles.
        let publishing = try PublishingWorkspace()
        let file = publishing.work.file("in/again.pmtiles")
        #expect(try mapgate.run(["export", "geo", file, "--json"], at: "2027-01-02 00:00:00").stdout.contains("\"region\":\"geo\""))
        try publishing.work.write("in/regions.json", #"{"again.pmtiles": {"version": "1"}}"#)
        let published = try publishing.mapgate.run(["publish", publishing.work.file("in"), "--out", publishing.work.file("out"), "--key", publishing.key.secretKeyFile])
        try #require(published.status == 0, "\(published.stderr)")
        try #require(try publishing.mapgate.run(["sync", "again"]).status == 0)
        #expect(try PublishingWorkspace.tiles(publishing.mapgate.dataDirectory + "/regions/again.mbtiles") == installed("geo"))
    }

    @Test func anExportIsOneUseCountedOnlyWhenItSucceeds() throws {
        #expect(try promptsShown() == 0)
        // In the prompt period: a successful export costs one use.
        let first = try mapgate.run(["export", "geo", work.file("one.pmtiles")], at: "2027-02-01 01:00:00")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("2 uses left"), "\(first.stderr)")
        #expect(try promptsShown() == 1)
        // A failure while writing (no scratch folder) gives the use back and leaves no file.
        let failed = try mapgate.run(["export", "geo", work.file("two.pmtiles")], at: "2027-02-01 02:00:00", environment: ["TMPDIR": work.file("missing")])
        #expect(failed.status != 0 && failed.stderr.contains("scratch file"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("two.pmtiles")))
        #expect(try promptsShown() == 1)
        // A mistake found before the gate costs nothing either.
        #expect(try mapgate.run(["export", "geo", work.path], at: "2027-02-01 03:00:00").status == 64)
        #expect(try mapgate.run(["export", "nope", work.file("x.pmtiles")], at: "2027-02-01 03:00:00").status == 1)
        #expect(try promptsShown() == 1)
        #expect(try mapgate.run(["export", "geo", work.file("three.pmtiles")], at: "2027-02-01 04:00:00").status == 0)
        #expect(try promptsShown() == 2)
        // Uses spent: the gate is closed, and export is refused like tile, writing nothing.
        let refused = try mapgate.run(["export", "geo", work.file("four.pmtiles")], at: "2027-02-01 05:00:00")
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.contains("update required"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("four.pmtiles")))
    }

    /// FILE is written as `tile -o` writes it (found by an attack: export opened a dangling link
    /// without creating its file, and waited for a FIFO's reader without a word).
    @Test func aDanglingLinkAndAFIFOAreWrittenAsTileWritesThem() throws {
        let target = work.file("made-through-link.pmtiles")
        let link = work.file("link.pmtiles")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let throughLink = try mapgate.run(["export", "geo", link], at: "2027-01-02 00:00:00")
        #expect(throughLink.status == 0, "\(throughLink.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)).starts(with: Array("PMTiles".utf8)))

        let fifo = work.file("export.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let waiting = try mapgate.start(["export", "geo", fifo], at: "2027-01-02 00:00:00")
        let deadline = Date().addingTimeInterval(20)
        while !waiting.stderr.contains("waiting for a process to read"), Date() < deadline { usleep(20_000) }
        #expect(waiting.stderr.contains("waiting for a process to read \(fifo)"), "\(waiting.stderr)")
        let copied = work.file("from-fifo.pmtiles")
        let reader = try BackgroundProcess("/bin/sh", ["-c", "cat \"$0\" > \"$1\"", fifo, copied])
        #expect(waiting.wait() == 0, "\(waiting.stderr)")
        #expect(reader.wait() == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copied)) == (try Data(contentsOf: URL(fileURLWithPath: target))))
    }

    @Test func anExistingFileIsReplacedOnlyWhenTheArchiveIsComplete() throws {
        let file = work.file("kept.pmtiles")
        try Data("old".utf8).write(to: URL(fileURLWithPath: file))
        let failed = try mapgate.run(["export", "geo", file], at: "2027-01-02 00:00:00", environment: ["TMPDIR": work.file("missing")])
        #expect(failed.status != 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("old".utf8))
        let done = try mapgate.run(["export", "geo", file], at: "2027-01-02 00:00:00")
        #expect(done.status == 0, "\(done.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).starts(with: Array("PMTiles".utf8)))
    }

    /// The size of `geo`'s archive (exported once, into `name`) and of the gate state's two files:
    /// what a file size limit is set between.
    func archiveAndStateSizes(exportingTo name: String) throws -> (archive: Int, states: [Int]) {
        let whole = work.file(name)
        #expect(try mapgate.run(["export", "geo", whole], at: "2027-02-10 00:00:00").status == 0)
        let archive = try #require(FileManager.default.attributesOfItem(atPath: whole)[.size] as? NSNumber).intValue
        let states = [mapgate.dataDirectory + "/state.sqlite", mapgate.stateHome + "/mapgate/state.sqlite"].map {
            ((try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? NSNumber)?.intValue) ?? 0
        }
        return (archive, states)
    }

    /// A file-size limit (found by an attack: SIGXFSZ killed the export, exit 153, its temporary
    /// file left): the write fails, exit 74 with the reason, the file as it was, no use counted.
    @Test func aFileSizeLimitIsAWriteThatFails() throws {
        // A limit between the gate state's files (with room for them to grow) and the archive.
        let (archive, states) = try archiveAndStateSizes(exportingTo: "whole.pmtiles")
        let limit = archive * 3 / 4 / 1024
        try #require(states.allSatisfy { $0 * 2 < archive * 3 / 4 }, "archive \(archive), states \(states)")
        let file = work.file("limited.pmtiles")
        try Data("old".utf8).write(to: URL(fileURLWithPath: file))
        let before = try promptsShown()
        let (program, rest) = mapgate.command(
            ["/bin/bash", "-c", "ulimit -f \(limit) && exec \"$@\"", "limited", "/usr/bin/faketime", "2027-02-10 00:00:00", mapgate.path, "export", "geo", file,
             "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
        let result = try runProcess(program, rest, environment: mapgate.baseEnvironment)
        #expect(result.status == 74, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("larger than this process may write"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.contains("limited") && $0 != "limited.pmtiles" } == [])
        #expect(try promptsShown() == before)
    }

    /// The same limit with standard output appended to a file (`>> FILE`) that already holds as
    /// much as the archive: the archive's room past it is found missing before its first byte
    /// (the tiles' scratch file, as large as their data, still fits), so nothing is written and
    /// nothing counted (it held a cut archive and cost a use; found by an attack). The file keeps
    /// what it held.
    @Test func aFileSizeLimitBehindStandardOutputIsFoundBeforeTheFirstByte() throws {
        let (archive, states) = try archiveAndStateSizes(exportingTo: "whole2.pmtiles")
        let limit = archive * 3 / 2 / 1024
        try #require(states.allSatisfy { $0 < archive }, "archive \(archive), states \(states)")
        let file = work.file("appended.pmtiles")
        let held = Data(repeating: 0x6F, count: archive)
        try held.write(to: URL(fileURLWithPath: file))
        let before = try promptsShown()
        let (program, rest) = mapgate.command(
            ["/bin/bash", "-c", "ulimit -f \(limit) && exec \"$@\" >> \"$0\"", file, "/usr/bin/faketime", "2027-02-10 00:00:00", mapgate.path, "export", "geo", "-",
             "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory])
        let result = try runProcess(program, rest, environment: mapgate.baseEnvironment)
        #expect(result.status == 74, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("larger than this process may write"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == held)
        #expect(try promptsShown() == before)
    }

    @Test func standardOutputGetsTheArchive() throws {
        let result = try mapgate.run(["export", "geo", "-"], at: "2027-01-02 00:00:00")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutData.starts(with: Array("PMTiles".utf8) + [3]))
    }

    /// Ctrl-C at the moment of delivery (the run stopped just before it links the archive into
    /// place): either the archive is in place and the use kept, or neither; never the archive for
    /// free, and nothing left beside it.
    @Test func ctrlCAtTheDeliveryNeverGivesTheArchiveForFree() throws {
        let folder = work.file("ctrl-c")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let output = folder + "/geo.pmtiles"
        let before = try #require(try promptsShown())
        let export = try mapgate.start(["export", "geo", output], at: "2027-02-01 01:00:00", environment: ["MAPGATE_FAULT_STOP_AT": "delivering"])
        let pid = try export.descendant(named: "mapgate")
        #expect(waitUntil(timeout: 20) { processIsStopped(pid) }, "\(export.stderr)")
        kill(pid, SIGINT)
        kill(pid, SIGCONT)
        let status = export.wait(timeout: 20)
        let exists = FileManager.default.fileExists(atPath: output)
        let spent = try #require(try promptsShown()) - before
        #expect(status == 130 || status == 0, "\(export.stderr)")
        #expect(exists == (spent == 1), "archive written: \(exists), uses spent: \(spent); \(export.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { !$0.contains(".mapgate-") })
    }
}
