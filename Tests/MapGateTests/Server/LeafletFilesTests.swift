import Foundation
import MapGate
import TestSupport
import Testing

/// `leafletPath` is the user's to set: only Leaflet's own files come out of it.
@Suite struct LeafletFilesTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("leaflet.js", "L = {}")
        try folder.write("leaflet.css", ".leaflet {}")
        try folder.write("images/marker-icon.png", "png")
        try folder.write("kr-seoul.mbtiles", "a whole region")
        try folder.write("secret.txt", "secret")
    }

    @Test func leafletsFilesAreServed() {
        #expect(LeafletFiles.contents(of: "leaflet.js", in: folder.path) == Data("L = {}".utf8))
        #expect(LeafletFiles.contents(of: "leaflet.css", in: folder.path) != nil)
        #expect(LeafletFiles.contents(of: "images/marker-icon.png", in: folder.path) != nil)
    }

    /// 1.4.0: `leafletPath` at the regions folder (or `/`) served `/_leaflet/<id>.mbtiles`, and any file.
    @Test(arguments: ["kr-seoul.mbtiles", "secret.txt", "images/../secret.txt", "../etc/passwd", "images/x.png/..", "leaflet.js.map"])
    func nothingElseIs(name: String) {
        #expect(LeafletFiles.contents(of: name, in: folder.path) == nil)
    }

    @Test func aSymlinkOutOfTheFolderIsNotFollowed() throws {
        let other = try TemporaryDirectory()
        let target = try other.write("leaflet.js", "not leaflet")
        try FileManager.default.removeItem(atPath: folder.file("leaflet.js"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("leaflet.js"), withDestinationPath: target)
        #expect(LeafletFiles.contents(of: "leaflet.js", in: folder.path) == nil)
        try FileManager.default.removeItem(atPath: folder.file("images/marker-icon.png"))
        try FileManager.default.removeItem(atPath: folder.file("images"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("images"), withDestinationPath: other.path)
        try other.write("marker-icon.png", "elsewhere")
        #expect(LeafletFiles.contents(of: "images/marker-icon.png", in: folder.path) == nil)
    }
}
