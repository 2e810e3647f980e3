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

    /// Found by Fuzz/targets/mbtiles.swift's seeds: MIN/MAX over an integer and a text zoom
    /// level made an upside-down range, a trap in sync's validation and in the server.
    @Test func zoomLevelsThatAreNotIntegersAreAnError() throws {
        let work = try TemporaryDirectory()
        let path = work.file("text-zoom.mbtiles")
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        try database.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
        try database.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
        try database.execute("INSERT INTO tiles VALUES (5, 0, 0, x'00'), ('abc', 0, 0, x'00')")
        let error = #expect(throws: MBTilesError.self) { try MBTilesFile(path: path).zoomRange() }
        #expect(error?.reason.contains("1 tiles have a zoom_level that is not an integer") == true, "\(error?.reason ?? "")")
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
