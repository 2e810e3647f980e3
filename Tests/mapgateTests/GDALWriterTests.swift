import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// Regions as GDAL writes them (issue 38, item 6): raster with `gdal_translate -of MBTILES` and
/// `gdaladdo` from a GeoTIFF of noise over Seoul (version 2 burns a small square in, changing a
/// few of its 18 tiles), vector with `ogr2ogr -f MBTILES`. Each is published and synced by delta
/// while a server runs (``PublishingWorkspace/checkRoundTrip(v1:v2:id:extension:sourceLocation:)``):
/// the installed tiles are GDAL's byte for byte, unchanged tiles keep their validator across the
/// update (304), and the TileJSON validates against TileJSON 3.0.0's schema.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gdal_translate"), "GDAL from scripts/install-deps (gdal-bin)"))
struct GDALWriterTests {
    let workspace: PublishingWorkspace
    var work: TemporaryDirectory { workspace.work }
    var mapgate: MapGateBinary { workspace.mapgate }

    init() throws {
        workspace = try PublishingWorkspace()
    }

    func gdal(_ tool: String, _ arguments: [String]) throws {
        let result = try runProcess("/usr/bin/" + tool, arguments)
        try #require(result.status == 0, "\(tool): \(result.stderr)")
    }

    /// Both versions, as GDAL writes them.
    func writeVersions() throws -> (String, String) {
        // Noise, so that tiles do not compress to nothing and a delta is worth making.
        let ppm = work.file("noise.ppm")
        var generator = SystemRandomNumberGenerator()
        var pixels = Data("P6\n512 512\n255\n".utf8)
        pixels.append(contentsOf: (0..<(512 * 512 * 3)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try pixels.write(to: URL(fileURLWithPath: ppm))
        let tif1 = work.file("v1.tif")
        try gdal("gdal_translate", ["-q", "-of", "GTiff", "-a_srs", "EPSG:3857", "-a_ullr", "14000000", "4600000", "14200000", "4400000", ppm, tif1])
        let patch = work.file("patch.geojson")
        try #"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:3857"}},"features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[14020000,4560000],[14050000,4560000],[14050000,4590000],[14020000,4590000],[14020000,4560000]]]}}]}"#
            .write(toFile: patch, atomically: true, encoding: .utf8)
        let tif2 = work.file("v2.tif")
        try FileManager.default.copyItem(atPath: tif1, toPath: tif2)
        try gdal("gdal_rasterize", ["-q", "-burn", "250", "-burn", "10", "-burn", "10", patch, tif2])
        var files: [String] = []
        for (tif, name) in [(tif1, "v1.mbtiles"), (tif2, "v2.mbtiles")] {
            let file = work.file(name)
            try gdal("gdal_translate", ["-q", "-of", "MBTILES", tif, file])
            try gdal("gdaladdo", ["-q", file, "2", "4", "8", "16"])
            files.append(file)
        }
        return (files[0], files[1])
    }


    @Test func aGDALRasterRegionIsPublishedUpdatedByADeltaAndRevalidated() throws {
        let (v1, v2) = try writeVersions()
        try workspace.checkRoundTrip(v1: v1, v2: v2, id: "seoul", extension: "png")
    }

    /// `ogr2ogr -f MBTILES` writing vector tiles (gzip MVT, its own metadata `json`): v2 adds a
    /// point far from the others (Europe, beside Seoul's 2,500), changing zoom 0's tile and one
    /// new tile per zoom.
    @Test func anOGRVectorRegionIsPublishedUpdatedByADeltaAndRevalidated() throws {
        func points(_ extra: String) -> String {
            var features: [String] = []
            // 2,500 points over Seoul: tiles large enough that a delta is worth offering.
            for index in 0..<2500 {
                let (lon, lat) = (126.8 + Double(index % 50) * 0.008, 37.4 + Double(index / 50) * 0.006)
                features.append(#"{"type":"Feature","properties":{"name":"p\#(index)"},"geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]}}"#)
            }
            return #"{"type":"FeatureCollection","features":["# + (features + (extra.isEmpty ? [] : [extra])).joined(separator: ",") + "]}"
        }
        var files: [String] = []
        for (name, extra) in [("v1", ""), ("v2", #"{"type":"Feature","properties":{"name":"new"},"geometry":{"type":"Point","coordinates":[10.0,50.0]}}"#)] {
            let source = work.file("\(name).geojson")
            try points(extra).write(toFile: source, atomically: true, encoding: .utf8)
            let file = work.file("\(name).mbtiles")
            try gdal("ogr2ogr", ["-f", "MBTILES", file, source, "-dsco", "MINZOOM=0", "-dsco", "MAXZOOM=6", "-nln", "places"])
            files.append(file)
        }
        try workspace.checkRoundTrip(v1: files[0], v2: files[1], id: "places", extension: "pbf")
    }

    /// GDAL's MVT driver (and QGIS's through it) reads a served vector region one zoom level at a
    /// time, `MVT:http://HOST/REGION/Z`: its metadata at `/REGION/metadata.json` (the same TileJSON
    /// as `/REGION.json`: `bounds` so that it asks only for tiles inside them, `vector_layers` with
    /// their fields) and the tiles, gzip or not, at `/REGION/Z/X/Y.pbf` (issue 38, item 5).
    @Test func gdalReadsAServedVectorRegionOneZoomLevelAtATime() throws {
        let cli = try CLIWorkspace()
        try cli.offer("cities", fixture: "mbtileserver-world_cities.mbtiles", format: "pbf")
        try cli.mapgate.configure(["catalogURL": cli.catalogURL])
        let synced = try cli.mapgate.run(["sync", "cities"])
        try #require(synced.status == 0, "\(synced.stderr)")
        let server = try cli.mapgate.serve()
        defer { server.process.stop() }
        let metadata = try HTTPClient().get(HTTPRequest(url: server.base + "/cities/metadata.json"))
        #expect(metadata.status == 200)
        for zoom in [0, 3] {
            let info = try runProcess("/usr/bin/ogrinfo", ["-ro", "-al", "-so", "MVT:\(server.base)/cities/\(zoom)"])
            #expect(info.status == 0, "zoom \(zoom): \(info.stderr)")
            #expect(info.stdout.contains("Layer name: cities"), "\(info.stdout)")
            #expect(info.stdout.contains("name: String"), "the layer's fields: \(info.stdout)")
            let count = info.stdout.split(separator: "\n").first { $0.hasPrefix("Feature Count: ") }.flatMap { Int($0.dropFirst("Feature Count: ".count)) }
            #expect((count ?? 0) > 0, "zoom \(zoom): \(info.stdout)")
        }
    }
}
