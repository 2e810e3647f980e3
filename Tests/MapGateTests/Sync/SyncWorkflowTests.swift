import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// `sync` as a library use case (SyncWorkflow), with a gate that prompts: what costs a use.
/// A use is counted only when a region or style is installed, updated or repaired (issue 25,
/// part 1); faults of the publisher, the network or the disk cost nothing.
@Suite struct SyncWorkflowTests {
    let harness: SyncHarness
    let time = ManualTime(Date(timeIntervalSince1970: 1_790_000_000))
    var settings = GateSettings(appID: 42)
    let source: String

    init() throws {
        harness = try SyncHarness()
        source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try harness.work.write(
            "www/lookup.json",
            #"{"resultCount":1,"results":[{"trackId":42,"version":"1.5.0","trackViewUrl":"https://apps.example/mapgate"}]}"#)
        settings.lookupURL = harness.origin.baseURL + "/lookup.json"
        // A newer version, past its grace period: every use prompts and counts.
        _ = try gate().check()
        time.advance(days: 31)
        try harness.builder.add(id: "r", source: source, format: "png")
    }

    func gate() throws -> Gate {
        Gate(store: try harness.gateStore(clock: time.clock), settings: settings, clock: time.clock, installed: try AppVersion("1.4.0"))
    }

    var promptsShown: Int { get throws { try gate().status().record.promptsShown } }

    struct Run {
        var summary: SyncWorkflow.Summary
        var events: [String]
    }

    func sync(_ regions: [String], maxAttempts: Int = 1, confirm: @escaping (GateAuthorization) -> Bool = { _ in true }) throws -> Run {
        let workflow = SyncWorkflow(catalog: try gate().accept(try harness.fetchedCatalog()), library: harness.library, installer: try harness.installer(maxAttempts: maxAttempts))
        var events: [String] = []
        let summary = try workflow.run(
            requested: regions, gate: try gate(), lock: { try DirectoryLock(directory: harness.directory) }, confirm: confirm
        ) { event in
            switch event {
            case .synced(let region, let outcome): events.append("\(region.id): \(outcome)")
            case .upToDate(let region, let version): events.append("\(region.id): \(version) up to date")
            case .failed(let id, _, let error): events.append("\(id ?? "?") failed: \(errorMessage(error))")
            case .kept(let id, _): events.append("\(id): kept")
            default: break
            }
        }
        return Run(summary: summary, events: events)
    }

    @Test func anInstallCountsOneUse() throws {
        let run = try sync(["r"])
        #expect(run.summary.firstFailure == nil)
        #expect(run.events.count == 1 && run.events[0].hasPrefix("r: installed 1"), "\(run.events)")
        #expect(try promptsShown == 1)
    }

    @Test func twoRegionsInOneRunAreOneUse() throws {
        try harness.builder.add(id: "s", source: source, format: "png")
        let run = try sync(["r", "s", "r"])  // a name given twice is synced once
        #expect(run.events.count == 2, "\(run.events)")
        #expect(try promptsShown == 1)
    }

    @Test func upToDateCostsNothing() throws {
        _ = try sync(["r"])
        let again = try sync(["r"])
        #expect(again.events == ["r: 1 up to date"])
        #expect(try promptsShown == 1)
    }

    @Test(arguments: [
        ("a SHA-256 that does not match", ["sha256": String(repeating: "0", count: 64)]),
        ("a download cut short", ["url": "_fault/cut=100/packages/r-1.mbtiles.gz"]),
        ("a stalled download", ["url": "_fault/stall=5/packages/r-1.mbtiles.gz"]),
        ("a package that is not MBTiles", ["format": "pbf"]),
    ] as [(String, [String: String])])
    func aFailedInstallCostsNothing(fault: String, overrides: [String: String]) throws {
        try harness.builder.add(id: "r", source: source, format: "png", overrides: overrides)
        let run = try sync(["r"])
        #expect(run.summary.firstFailure != nil, "\(fault)")
        #expect(run.events.count == 1 && run.events[0].hasPrefix("r failed:"), "\(fault): \(run.events)")
        #expect(!FileManager.default.fileExists(atPath: harness.directory.regionPath("r")))
        #expect(try promptsShown == 0, "\(fault)")
    }

    @Test func onePackageFailingWhileAnotherInstallsIsOneUse() throws {
        try harness.builder.add(id: "s", source: source, format: "png", overrides: ["sha256": String(repeating: "0", count: 64)])
        let run = try sync(["r", "s"])
        #expect(run.summary.firstFailure != nil)
        #expect(try promptsShown == 1)
    }

    @Test func aRepairCountsAUse() throws {
        _ = try sync(["r"])
        let handle = try #require(FileHandle(forWritingAtPath: harness.directory.regionPath("r")))
        try handle.truncate(atOffset: 4096)
        try handle.close()
        let run = try sync(["r"])
        #expect(run.events.count == 1 && run.events[0].hasPrefix("r: repaired 1"), "\(run.events)")
        #expect(try promptsShown == 2)
    }

    /// The use is delivered the moment the rename puts the region in place, before its record is
    /// saved: a run stopped (SIGTERM) right after the rename must not get it back.
    @Test func theUseIsDeliveredByTheRenameItself() throws {
        let workflow = SyncWorkflow(catalog: try gate().accept(try harness.fetchedCatalog()), library: harness.library, installer: try harness.installer())
        var held: GateAuthorization?
        var deliveredWhenInstalled: Bool?
        _ = try workflow.run(
            requested: ["r"], gate: try gate(), lock: { try DirectoryLock(directory: harness.directory) },
            confirm: { authorization in
                held = authorization
                return true
            }
        ) { event in
            if case .stage(_, .installed) = event { deliveredWhenInstalled = held?.isDelivered }
        }
        #expect(deliveredWhenInstalled == true)
    }

    @Test func choosingUpdateNowInstallsNothingAndCostsNothing() throws {
        let run = try sync(["r"], confirm: { _ in false })
        #expect(run.summary.choseUpdate)
        #expect(run.events.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: harness.directory.regionPath("r")))
        #expect(try promptsShown == 0)
    }

    @Test func aClosedGateRefusesBeforeAnyPackageIsAsked() throws {
        for _ in 1...5 { try gate().authorizeUse().recordDelivery() }
        harness.origin.clearRequests()
        #expect(throws: GateClosedError.self) { try sync(["r"]) }
        #expect(harness.origin.requests.allSatisfy { !$0.path.contains("packages") })
    }

    @Test func aTypoThrowsBeforeTheGateIsAsked() throws {
        #expect(throws: RegionError.self) { try sync(["nosuch"]) }
        let record = try gate().status().record
        #expect(record.promptsShown == 0)
        #expect(record.usesSinceLookup == 0)
    }
}
