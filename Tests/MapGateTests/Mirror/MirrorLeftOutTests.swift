import Foundation
import MapGate
import Testing

/// What a reader of `mirror.json` says of the writer's reasons (in English in the file).
@Suite struct MirrorLeftOutTests {
    /// Each reason mapgate writes is read back as mapgate's own words (in the reader's language;
    /// English here), from the writer's side.
    @Test func mapgatesOwnReasonsAreReadBack() {
        for reason: MirrorLeftOut in [.notOffered, .notRebuildable, .notInstalledThere, .carriesDelta(fromVersion: "3")] {
            #expect(MirrorLeftOut.readerText(ofManifestText: reason.manifestText) == reason.localized, "\(reason)")
        }
        #expect(MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.damagedOnMirror.manifestText)?.contains("the machine that wrote the mirror last") == true)
        #expect(MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.notWritten("disk full").manifestText)?.contains("could not write it") == true)
        // The writer's advice ("'mapgate sync geo' first") is not given to the reader.
        let other = MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.otherVersion(id: "geo", installed: "1", offered: "2").manifestText)
        #expect(other == "the machine that wrote this mirror has version 1, not the catalog's 2")
    }

    /// Words mapgate does not write are not read as its own; the versions taken out of one it
    /// does are text from a stick: one line, short.
    @Test func otherWordsAreNotReadAsMapgates() throws {
        #expect(MirrorLeftOut.readerText(ofManifestText: "disk full") == nil)
        #expect(MirrorLeftOut.readerText(ofManifestText: MirrorLeftOut.notInstalledThere.manifestText + " ") == nil)
        let forged = "version 1\nplain 2: installed is installed and the catalog offers \(String(repeating: "9", count: 5000)): 'mapgate sync geo' first"
        let read = try #require(MirrorLeftOut.readerText(ofManifestText: forged))
        #expect(!read.contains("\n") && read.count < 200, "\(read)")
    }
}
