import Foundation
import MapGate
import TestSupport
import Testing

/// Commands that only read the data directory never create it, and their words fit the count.
@Suite struct ReadOnlyCommandTests {
    let workspace: CLIWorkspace
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try CLIWorkspace()
        try mapgate.configure(["catalogURL": workspace.catalogURL])
    }

    @Test func listAndVerifyOfAMistypedDataDirectoryCreateNothing() throws {
        let typo = workspace.work.file("no/such/dtaa")
        let list = try mapgate.runBare(["list", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("the data directory \(typo) does not exist: no region is installed"), "\(list.stdout)")
        let json = try mapgate.runBare(["list", "--json", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(json.status == 0 && json.stdout.isEmpty, "\(json.stdout)")
        let verify = try mapgate.runBare(["verify", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(verify.status == 0, "\(verify.stderr)")
        let named = try mapgate.runBare(["verify", "x", "--config", mapgate.configPath, "--data-dir", typo])
        #expect(named.status != 0 && named.stderr.contains("region x: not installed (the data directory"), "\(named.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.work.file("no")))
    }

    @Test func oneRegionIsOneRegion() throws {
        try workspace.offer("geo", fixture: "mbtileserver-geography-class-png.mbtiles", format: "png")
        let catalog = try mapgate.run(["catalog"])
        #expect(catalog.status == 0, "\(catalog.stderr)")
        #expect(catalog.stdout.contains("Test Maps: 1 region,"), "\(catalog.stdout)")
    }
}
