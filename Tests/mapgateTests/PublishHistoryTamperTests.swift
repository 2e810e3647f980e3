import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// What `publish` keeps in `OUT_DIR/.publish/history.json`, attacked (2026-12-05): the file names
/// it holds, and version numbers trimmed from it by `--keep`.
@Suite struct PublishHistoryTamperTests {
    let workspace: PublishingWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }
    var historyPath: String { workspace.work.file("out/.publish/history.json") }

    init() throws {
        workspace = try PublishingWorkspace()
    }

    /// Publishes shared fixture `fixture` as region `r` at `version`, keeping `keep` versions.
    func publish(_ fixture: String, version: Int, keep: Int = 1) throws -> ProcessResult {
        let input = workspace.work.file("in/r.mbtiles")
        try? FileManager.default.removeItem(atPath: input)
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/" + fixture), toPath: input)
        try workspace.work.write("in/regions.json", #"{"r.mbtiles": {"version": "\#(version)"}}"#)
        return try mapgate.run(["publish", workspace.work.file("in"), "--out", workspace.work.file("out"), "--key", workspace.key.secretKeyFile, "--keep", String(keep)])
    }

    func editHistory(_ change: (inout [String: Any]) -> Void) throws {
        var history = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: historyPath))) as? [String: Any])
        change(&history)
        try JSONSerialization.data(withJSONObject: history).write(to: URL(fileURLWithPath: historyPath))
    }

    /// A history naming files outside the output folder (restored from a bucket someone else
    /// wrote, or edited): publish removed them when it trimmed their version, a folder with all
    /// it held. It is refused, naming the history, and nothing outside is touched.
    @Test func aHistoryNamingFilesOutsideTheOutputFolderIsRefused() throws {
        let victim = workspace.work.file("victim")
        try FileManager.default.createDirectory(atPath: victim + "/inside", withIntermediateDirectories: true)
        try workspace.work.write("victim/inside/precious", "precious")
        try workspace.work.write("victim-file", "precious")
        #expect(try publish("mbtileserver-geography-class-png.mbtiles", version: 1).status == 0)
        try editHistory { history in
            var regions = history["regions"] as? [String: Any] ?? [:]
            var versions = regions["r"] as? [[String: Any]] ?? []
            var old = versions[0]
            old["version"] = "0"
            old["package"] = "../../victim"
            old["base"] = "../../../victim-file"
            old["deltas"] = []
            versions.append(old)
            regions["r"] = versions
            history["regions"] = regions
        }
        let refused = try publish("mbtileserver-geography-class-png.mbtiles", version: 2)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("history.json") && refused.stderr.contains("\"../../victim\""), "\(refused.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim + "/inside/precious"))
        #expect(FileManager.default.fileExists(atPath: workspace.work.file("victim-file")))
    }

    /// What the refusal quotes of the history is escaped (found by the attack on it: a name with a
    /// line feed printed a forged `error:` line).
    @Test func aHistorysNamesAreEscapedInTheRefusal() throws {
        #expect(try publish("mbtileserver-geography-class-png.mbtiles", version: 1).status == 0)
        try editHistory { history in
            var regions = history["regions"] as? [String: Any] ?? [:]
            var versions = regions["r"] as? [[String: Any]] ?? []
            versions[0]["package"] = "x/\nerror: forged"
            regions["r"] = versions
            history["regions"] = regions
        }
        let refused = try publish("mbtileserver-geography-class-png.mbtiles", version: 2)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("x/\\nerror: forged") && !refused.stderr.contains("\nerror: forged"), "\(refused.stderr)")
    }

    /// A version trimmed away by `--keep` is never published again with other tiles: a client that
    /// had it would keep the first tiles as "up to date" while new clients got the others.
    @Test func aVersionTrimmedAwayIsNotPublishedAgainWithOtherTiles() throws {
        #expect(try publish("mbtileserver-geography-class-png.mbtiles", version: 1).status == 0)
        #expect(try publish("node-mbtiles-plain_1.mbtiles", version: 2).status == 0)
        let again = try publish("node-mbtiles-plain_1.mbtiles", version: 1)
        #expect(again.status == 65, "\(again.stderr)")
        #expect(again.stderr.contains("version \"1\" of region r was published before from another file"), "\(again.stderr)")
        // The same file under its own version may come back.
        #expect(try publish("mbtileserver-geography-class-png.mbtiles", version: 1).status == 0)
    }

    /// A catalog that gives an installed version other tiles (written by a publisher without the
    /// check above: here a history from before it): `sync` installs that version again, so every
    /// machine has the tiles the signed catalog names.
    @Test func syncInstallsAgainAVersionTheCatalogGivesOtherTiles() throws {
        #expect(try publish("mbtileserver-geography-class-png.mbtiles", version: 1).status == 0)
        #expect(try mapgate.run(["sync", "r"]).status == 0)
        #expect(try publish("node-mbtiles-plain_1.mbtiles", version: 2).status == 0)
        try editHistory { $0["retired"] = nil }
        #expect(try publish("node-mbtiles-plain_1.mbtiles", version: 1).status == 0)
        let sync = try mapgate.run(["sync", "r"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stderr.contains("region r: the catalog's version 1 has other tiles than the installed 1"), "\(sync.stderr)")
        let installed = try PublishingWorkspace.tiles(mapgate.dataDirectory + "/regions/r.mbtiles")
        #expect(installed == (try PublishingWorkspace.tiles(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"))))
        let again = try mapgate.run(["sync", "r"])
        #expect(again.status == 0 && again.stdout.contains("up to date"), "\(again.stdout) \(again.stderr)")
    }
}
