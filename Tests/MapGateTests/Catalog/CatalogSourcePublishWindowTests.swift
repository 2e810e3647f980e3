import Foundation
import MapGate
import MapGateDemo
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

    /// A catalog URL with a query (cache busting) or a fragment (found by an attack: the signature
    /// was looked for at `catalog.json?v=2.minisig`, which a server answers with the catalog).
    @Test func theSignatureOfACatalogURLWithAQueryIsBesideItsPath() throws {
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json") == "https://h.example/c.json.minisig")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json?v=2&t=a") == "https://h.example/c.json.minisig?v=2&t=a")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json#top") == "https://h.example/c.json.minisig")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json?v=2#top") == "https://h.example/c.json.minisig?v=2")
        let www = work.file("www")
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        try catalog(serial: 4).write(to: URL(fileURLWithPath: www + "/catalog.json"))
        try key.sign(www + "/catalog.json")
        let origin = try TestOrigin(root: www)
        defer { origin.stop() }
        let source = CatalogSource(
            url: origin.baseURL + "/catalog.json?v=2#latest", trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        #expect(try source.fetch().catalog.serial == 4)
        #expect(origin.requests.map(\.target).contains("/catalog.json.minisig?v=2"), "\(origin.requests.map(\.target))")
    }

    /// A signed catalog cut off every 150 bytes by a server that answers each part with other
    /// bytes (its first inverted): joined from those parts it does not match its signature, and
    /// is asked for again whole; what is said is the transfer's failure, not that the publisher's
    /// file "changed after signing" (found by an attack). Cut once, the whole answer is taken.
    @Test(arguments: [false, true])
    func aCatalogSplicedFromWrongPartsIsFetchedWhole(everyTime: Bool) throws {
        let www = work.file("www-\(everyTime)")
        try FileManager.default.createDirectory(atPath: www + "/real", withIntermediateDirectories: true)
        var text = #"{"formatVersion": 1, "publisher": "Test", "serial": 6, "regions": []}"#
        text += String(repeating: " ", count: 600 - text.utf8.count) + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: www + "/real/catalog.json"))
        try key.sign(www + "/real/catalog.json")
        try FileManager.default.moveItem(atPath: www + "/real/catalog.json.minisig", toPath: www + "/catalog.json.minisig")
        let fault = everyTime ? "cut=150,garble" : "cut=150,garble,times=1"
        try Data("/_fault/\(fault)/real/catalog.json\n".utf8).write(to: URL(fileURLWithPath: www + "/catalog.json.redirect"))
        let origin = try TestOrigin(root: www)
        defer { origin.stop() }
        var source = CatalogSource(url: origin.baseURL + "/catalog.json", trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.retryDelays = [0, 0, 0]
        source.publishWindow = 0.1
        if everyTime {
            let error = #expect(throws: (any Error).self) { try source.fetch() }
            let message = error.map { errorMessage($0) } ?? ""
            #expect(!message.contains("changed after signing"), "\(message)")
            #expect(message.contains("catalog"), "\(message)")
        } else {
            #expect(try source.fetch().catalog.serial == 6)
        }
        // Asked for whole after the spliced one: no range in the second round.
        #expect(origin.requests.contains { $0.path.hasSuffix("/real/catalog.json") && $0.range != nil }, "\(origin.requests.map { "\($0.path) \($0.range ?? "")" })")
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
