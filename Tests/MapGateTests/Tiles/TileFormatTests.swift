import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct TileFormatTests {
    @Test(arguments: [
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A] as [UInt8], TileFormat.png),
        ([0xFF, 0xD8, 0xFF, 0xE0], .jpg),
        (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBP".utf8), .webp),
        ([0x1F, 0x8B, 0x08], .pbf),
    ])
    func sniffsMagicBytes(bytes: [UInt8], format: TileFormat) {
        #expect(TileFormat(sniffing: Data(bytes)) == format)
    }

    @Test func unknownBytesAreNotGuessed() {
        #expect(TileFormat(sniffing: Data([0, 1, 2, 3])) == nil)
        #expect(TileFormat(sniffing: Data()) == nil)
    }

    @Test(arguments: [
        ("mbtileserver-world_cities.mbtiles", TileFormat.pbf, 0...6, 196),
        ("mbtileserver-geography-class-png.mbtiles", .png, 0...1, 5),
        ("node-mbtiles-plain_1.mbtiles", .png, 0...4, 285),
    ])
    func realFilesAreRead(name: String, format: TileFormat, zoom: ClosedRange<Int>, count: Int) throws {
        let file = try MBTilesFile(path: try TestPaths.shared("mbtiles/" + name))
        try file.checkIntegrity()
        #expect(try file.format() == format)
        #expect(try file.zoomRange() == zoom)
        #expect(try file.tileCount() == count)
    }

    @Test func invalidAndCorruptFilesAreRejected() throws {
        let invalid = #expect(throws: MBTilesError.self) { try MBTilesFile(path: try TestPaths.shared("mbtiles/mbtileserver-invalid.mbtiles")) }
        #expect(invalid?.reason.contains("no tiles table or view") == true)
        let corrupt = #expect(throws: MBTilesError.self) {
            let file = try MBTilesFile(path: try TestPaths.shared("mbtiles/node-mbtiles-corrupt.mbtiles"))
            try file.checkIntegrity()
        }
        #expect(corrupt?.reason.contains("malformed") == true, "\(corrupt?.reason ?? "")")
    }
}
