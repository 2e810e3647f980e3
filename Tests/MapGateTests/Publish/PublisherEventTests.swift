import Foundation
import MapGate
import TestSupport
import Testing

/// The order of a publish as the library tells it (issue 28: `publish` as one use case, the way
/// `sync` is): its steps, then what each region and style came to once the catalog is settled;
/// a refused publish tells no outcome and writes nothing.
@Suite struct PublisherEventTests {
    let workspace: PublishWorkspace
    let tiles = DeltaTestFiles.pyramid(maxZoom: 4, png: true, seed: 1)

    init() throws {
        workspace = try PublishWorkspace()
    }

    /// An event as a short line, enough to read the order.
    static func label(_ event: Publisher.Event) -> String {
        switch event {
        case .inputsChecked(let regions): "inputs " + regions.joined(separator: ",")
        case .stylesChecked(let styles): "styles " + styles.joined(separator: ",")
        case .packing(let region, let version): "packing \(region) \(version)"
        case .packed(let region, let package, _): "packed \(region) \(package)"
        case .deltaMade(let region, let from, let package, _): "delta \(region) from \(from) \(package)"
        case .stylePacked(let style, _, _): "style package \(style)"
        case .signed(let serial): "signed \(serial)"
        case .written(let catalog, let removed): "written \(PathText.lastComponent(catalog)), \(removed.count) removed"
        case .note(let text): "note " + (text.split(separator: " (").first.map(String.init) ?? text)
        case .region(let region): "region \(region.id) \(region.action.rawValue)"
        case .style(let style): "style \(style.id) \(style.action.rawValue)"
        case .finished(let report): "finished, serial \(report.serial.map(String.init) ?? "none"), \(report.catalogChanged ? "changed" : "unchanged")"
        }
    }

    /// A style of the raster region `region`.
    func writeStyle(drawing region: String) throws {
        let folder = workspace.input + "/styles/plain"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let style = #"{"version":8,"name":"Plain","sources":{"tiles":{"type":"raster","url":"mbtiles://\#(region)"}},"layers":[{"id":"tiles","type":"raster","source":"tiles"}]}"#
        try Data(style.utf8).write(to: URL(fileURLWithPath: folder + "/style.json"))
    }

    func publish(dryRun: Bool = false) throws -> (labels: [String], events: [Publisher.Event], report: PublishReport) {
        var events: [Publisher.Event] = []
        let publisher = Publisher(options: workspace.options(), clock: workspace.time.clock)
        let report =
            dryRun
            ? try publisher.plan { events.append($0) }
            : try publisher.publish(signingKey: workspace.secretKey, onEvent: { events.append($0) })
        return (events.map(Self.label), events, report)
    }

    @Test func aGoodPublishTellsItsStepsThenWhatEachRegionAndStyleCameTo() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try writeStyle(drawing: "alpha")

        let dryRun = try publish(dryRun: true)
        let versionNote = #"note region alpha: version "1" is the metadata "version" of alpha.mbtiles"#
        #expect(dryRun.labels == ["inputs alpha", "styles plain", versionNote, "region alpha added", "style plain added", "finished, serial 1, changed"])
        #expect(!FileManager.default.fileExists(atPath: workspace.output))

        let first = try publish()
        #expect(
            first.labels == [
                "inputs alpha", "styles plain", "packing alpha 1", "packed alpha packages/alpha-1.mbtiles.gz", "style package plain", "signed 1",
                "written catalog.json, 0 removed", versionNote, "region alpha added", "style plain added", "finished, serial 1, changed",
            ])
        #expect(first.events.last == .finished(first.report), "the last event holds what the run returns")
        #expect(first.events.contains(.region(try #require(first.report.regions.first))))
        #expect(first.events.contains(.packed(region: "alpha", package: "packages/alpha-1.mbtiles.gz", size: try CatalogBuilder.size(workspace.output + "/packages/alpha-1.mbtiles.gz"))))

        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 2), metadata: ["version": "2"])
        let second = try publish()
        #expect(
            second.labels == [
                "inputs alpha", "styles plain", "packing alpha 2", "packed alpha packages/alpha-2.mbtiles.gz",
                "delta alpha from 1 packages/alpha-1-to-2.delta.mbtiles.gz", "signed 2", "written catalog.json, 0 removed",
                #"note region alpha: version "2" is the metadata "version" of alpha.mbtiles"#, "region alpha updated",
                "style plain unchanged", "finished, serial 2, changed",
            ])

        let third = try publish()
        #expect(third.labels == ["inputs alpha", "styles plain", "region alpha unchanged", "style plain unchanged", "finished, serial 2, unchanged"])
    }

    /// A style that draws a region the catalog does not have stops the run after the inputs were
    /// checked: no package, no outcome, no output folder. (The version note of the steps before is
    /// not told either: notes come with the outcomes.)
    @Test func aRefusedStyleStopsTheRunBeforeAnythingIsWritten() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try writeStyle(drawing: "nowhere")
        var events: [Publisher.Event] = []
        let error = try #require(throws: PublishError.self) {
            try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: workspace.secretKey, onEvent: { events.append($0) })
        }
        #expect(error.reason.contains("region \"nowhere\" is not in this catalog"), "\(error.reason)")
        #expect(events.map(Self.label) == ["inputs alpha"])
        #expect(!FileManager.default.fileExists(atPath: workspace.output))
    }

    /// Issue 28: a publish that fails while it writes a package (here the package's name is taken
    /// by a folder) throws the reason and leaves the published catalog, its signature and the
    /// packages as they were; once the way is clear, the same publish goes through.
    @Test func aPublishFailingWhileWritingAPackageLeavesThePublishedCatalog() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let before = try workspace.snapshot()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(3, of: tiles, seed: 4), metadata: ["version": "2"])
        let blocker = workspace.output + "/packages/alpha-2.mbtiles.gz"
        try FileManager.default.createDirectory(atPath: blocker + "/in-the-way", withIntermediateDirectories: true)
        var events: [Publisher.Event] = []
        #expect(throws: (any Error).self) {
            try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: workspace.secretKey, onEvent: { events.append($0) })
        }
        #expect(!events.contains { if case .signed = $0 { true } else { false } }, "\(events.map(Self.label))")
        let after = try workspace.snapshot()
        let changed = Set(after.keys).symmetricDifference(before.keys).union(before.keys.filter { after[$0] != nil && after[$0] != before[$0] })
        #expect(changed.isEmpty, "files changed, added or removed: \(changed.sorted())")
        try FileManager.default.removeItem(atPath: blocker)
        #expect(try workspace.publish().serial == 2)
        #expect(try workspace.catalog().regions.first?.version == "2")
    }

    /// A file changed under a version published before is refused while the inputs are checked:
    /// no event at all, and the output folder stays byte for byte as it was.
    @Test func aRefusedInputTellsNothingAndChangesNothing() throws {
        try workspace.writeRegion("alpha.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try workspace.publish()
        let before = try workspace.snapshot()
        try workspace.writeRegion("alpha.mbtiles", tiles: DeltaTestFiles.changing(2, of: tiles, seed: 5), metadata: ["version": "1"])
        var events: [Publisher.Event] = []
        #expect(throws: PublishError.self) {
            try Publisher(options: workspace.options(), clock: workspace.time.clock).publish(signingKey: workspace.secretKey, onEvent: { events.append($0) })
        }
        #expect(events.isEmpty, "\(events.map(Self.label))")
        #expect(try workspace.snapshot() == before)
    }
}
