import Foundation
import MapGate
import TestSupport
import Testing

/// A publisher replaces `catalog.json.minisig`, then `catalog.json` (issue 40, item 8): a client
/// that fetched between the two renames holds a pair that belongs to no publish. It asks once
/// more a moment later, and takes the pair then; a pair that still does not match is refused.
@Suite struct CatalogSourcePublishWindowTests {
    let work: TemporaryDirectory
    let key: PublisherKey

    init() throws {
        work = try TemporaryDirectory()
        key = try PublisherKey(in: work.path)
    }

    func catalog(serial: Int) -> Data {
        Data(#"{"formatVersion": 1, "publisher": "Test", "serial": \#(serial), "regions": []}"#.utf8)
    }

    @Test func aPairCaughtBetweenThePublishersRenamesIsFetchedAgain() throws {
        let path = work.file("catalog.json")
        // The publish in progress: the new signature is in place, the old catalog still there.
        try catalog(serial: 2).write(to: URL(fileURLWithPath: path))
        try key.sign(path)
        try catalog(serial: 1).write(to: URL(fileURLWithPath: path))
        var source = CatalogSource(url: "file://" + path, trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.publishWindow = 0.5
        // ... and finishes a moment later.
        let finishing = Thread { Thread.sleep(forTimeInterval: 0.2); try? catalog(serial: 2).write(to: URL(fileURLWithPath: path)) }
        finishing.start()
        let fetched = try source.fetch()
        #expect(fetched.catalog.serial == 2)
    }

    @Test func aPairThatNeverMatchesIsRefused() throws {
        let path = work.file("catalog.json")
        try catalog(serial: 2).write(to: URL(fileURLWithPath: path))
        try key.sign(path)
        try catalog(serial: 3).write(to: URL(fileURLWithPath: path))
        var source = CatalogSource(url: "file://" + path, trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.publishWindow = 0.1
        #expect(throws: CatalogError.self) { try source.fetch() }
    }
}
