import Foundation
import MapGate
import TestSupport
import Testing

/// A region file damaged after install is noticed by its size and stamp (SHA-256 only when the
/// stamp changed) and installed again by `sync` ("Bad input, round two", item 14).
@Suite struct RegionRepairTests {
    let harness: SyncHarness
    let source: String

    init() throws {
        harness = try SyncHarness()
        source = try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles")
        try harness.builder.add(id: "r", source: source, format: "png")
        try harness.sync("r")
    }

    var path: String { harness.directory.regionPath("r") }

    /// Syncs `r` and returns the outcome and the notices.
    func sync() throws -> (RegionInstaller.Outcome, [String]) {
        let catalog = try harness.catalog()
        var notices: [String] = []
        let outcome = try harness.installer().sync(
            try #require(catalog.region("r")), from: catalog, authorization: try harness.authorization(),
            lock: try DirectoryLock(directory: harness.directory), notice: { notices.append($0) })
        return (outcome, notices)
    }

    /// A modification time past what Int64 nanoseconds hold (`touch -d 2300-01-01`, which ext4
    /// keeps): reading its stamp trapped (found by an attack: `list`, `tile`, `serve` and the `sync`
    /// that would repair it all crashed). It is a changed stamp: hashed, found intact, kept.
    @Test func aFileDatedPastWhatNanosecondsHoldIsAChangedStampNotACrash() throws {
        let touched = try runProcess("/usr/bin/touch", ["-d", "2300-01-01 00:00:00", path])
        try #require(touched.status == 0, "\(touched.stderr)")
        let identity = try #require(FileIdentity(path: path))
        #expect(identity.modified == Int64.max)
        #expect(try harness.library.installed().map(\.id) == ["r"])
        let (outcome, _) = try sync()
        guard case .upToDate = outcome else { Issue.record("unexpected \(outcome)"); return }
        #expect(try SyncHarness.tiles(of: path) == (try SyncHarness.tiles(of: source)))
    }

    /// `verify`'s mark of a region whose tiles it found damaged (``RegionLibrary/markTilesDamaged(of:timeout:)``):
    /// not recorded while a writer holds the data directory (said, not silent: found by an
    /// attack), recorded across a new stamp of the same file (found by the same attack: the
    /// check's own restamp made it skip), never over another install; once recorded, `sync`
    /// installs the region again.
    @Test func theDamagedTilesMarkWaitsForNoWriterAndSurvivesARestamp() throws {
        let library = harness.library
        let checked = try library.region("r")
        do {
            let busy = try DirectoryLock(directory: harness.directory)
            #expect(!library.markTilesDamaged(of: checked, timeout: 0.2), "recorded under another writer's lock")
            withExtendedLifetime(busy) {}
        }
        // A new stamp of the same bytes recorded since the check: the same install.
        library.recordStamp(RegionFileStamp(size: checked.size, modified: 1, inode: 1), of: checked)
        #expect(try library.region("r").fileStamp?.inode == 1)
        #expect(library.markTilesDamaged(of: checked, timeout: 5))
        #expect(try library.region("r").sha256 == InstalledRegion.damagedTilesMark)
        #expect(try library.region("r").condition(ofFileAt: path) == .damaged(InstalledRegion.damagedTilesReason))
        let (outcome, notices) = try sync()
        guard case .repaired = outcome else { Issue.record("expected a repair, got \(outcome) \(notices)"); return }
        #expect(try library.region("r").sha256?.isSHA256Hex == true)
        // Another install since the check: not marked.
        #expect(!library.markTilesDamaged(of: checked, timeout: 5))
    }

    @Test func theStampIsRecordedAtInstall() throws {
        let record = try harness.library.region("r")
        #expect(record.fileStamp == RegionFileStamp(path: path))
        #expect(try record.condition(ofFileAt: path) == .intact)
    }

    @Test func aTruncatedFileIsInstalledAgain() throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 4096)
        try handle.close()
        #expect(try harness.library.region("r").condition(ofFileAt: path, hashingUnstamped: false).isDamaged)

        let (outcome, notices) = try sync()
        guard case .repaired("1", _, _) = outcome else { Issue.record("\(outcome)"); return }
        #expect(notices.count == 1 && notices[0].contains("region r: the installed file is damaged (its size is 4096 bytes"), "\(notices)")
        #expect(try SHA256Hasher.hex(ofFileAt: path) == (try SHA256Hasher.hex(ofFileAt: source)))
        #expect(try harness.library.region("r").condition(ofFileAt: path) == .intact)
        #expect(try sync().0 == .upToDate(version: "1"))
    }

    /// A file deleted by hand is damaged (as `list` says), and `sync` repairs it: it said
    /// "updated from 1" to the same version 1.
    @Test func aMissingFileIsRepairedNotUpdated() throws {
        try FileManager.default.removeItem(atPath: path)
        let (outcome, notices) = try sync()
        guard case .repaired("1", _, _) = outcome else { Issue.record("\(outcome)"); return }
        #expect(notices == ["region r: the installed file is missing; installing it again"], "\(notices)")
        #expect(try SHA256Hasher.hex(ofFileAt: path) == (try SHA256Hasher.hex(ofFileAt: source)))
        #expect(try sync().0 == .upToDate(version: "1"))
    }

    @Test func aFileChangedInPlaceAtTheSameSizeIsInstalledAgain() throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let (outcome, notices) = try sync()
        guard case .repaired("1", _, _) = outcome else { Issue.record("\(outcome)"); return }
        #expect(notices.first?.contains("its SHA-256 is") == true, "\(notices)")
        #expect(try SHA256Hasher.hex(ofFileAt: path) == (try SHA256Hasher.hex(ofFileAt: source)))
    }

    @Test func aFileWithTheSameBytesAndANewStampIsKeptAndRestamped() throws {
        // A copy (say, restored from a backup): new inode and mtime, same bytes.
        let copy = harness.work.file("copy.mbtiles")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        harness.origin.clearRequests()
        let (outcome, notices) = try sync()
        #expect(outcome == .upToDate(version: "1"))
        #expect(notices.isEmpty, "\(notices)")
        #expect(harness.origin.requests.allSatisfy { $0.path == "/catalog.json" })
        #expect(try harness.library.region("r").fileStamp == RegionFileStamp(path: path))
    }
}
