import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// A raster region as GDAL writes it (issue 38, item 6): `gdal_translate -of MBTILES` and
/// `gdaladdo` from a GeoTIFF of noise over Seoul; version 2 burns a small square in, changing a
/// few of its 18 tiles. Published and synced by delta while a server runs: the installed tiles are GDAL's
/// byte for byte, unchanged tiles keep their validator across the update (304), and the TileJSON
/// validates against TileJSON 3.0.0's schema.
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
        let before = try PublishingWorkspace.tiles(v1)
        let after = try PublishingWorkspace.tiles(v2)
        let changed = Set(after.keys.filter { before[$0] != after[$0] })
        try #require(!changed.isEmpty && changed.count < after.count, "\(changed.count) of \(after.count) tiles changed")
        #expect(try workspace.publish(v1, as: "seoul", version: 1).status == 0)
        #expect(try mapgate.run(["sync", "seoul"]).status == 0)
        let server = try mapgate.serve()
        defer { server.process.stop() }
        // Every served tile's validator, before the update.
        var validators: [String: String] = [:]
        for address in after.keys {
            let answer = try HTTPClient().get(HTTPRequest(url: server.base + "/seoul/\(address).png"))
            #expect(answer.status == 200 && answer.body == before[address], "\(address)")
            validators[address] = answer.header("ETag")
        }

        let second = try workspace.publish(v2, as: "seoul", version: 2)
        #expect(second.status == 0, "\(second.stderr)")
        let synced = try mapgate.run(["sync", "seoul"])
        #expect(synced.stdout.contains("updated (delta, "), "\(synced.stdout) \(synced.stderr)")
        #expect(try PublishingWorkspace.tiles(mapgate.dataDirectory + "/regions/seoul.mbtiles") == after, "GDAL's tiles byte for byte")
        #expect(waitUntil(timeout: 5) {
            (try? JSONDecoder().decode(TileJSON.self, from: HTTPClient().get(HTTPRequest(url: server.base + "/seoul.json")).body).version) == "2.0.0"
        })
        var revalidated = 0
        for (address, etag) in validators {
            var request = HTTPRequest(url: server.base + "/seoul/\(address).png")
            request.headers.append((name: "If-None-Match", value: etag))
            let answer = try HTTPClient().get(request)
            if changed.contains(address) {
                #expect(answer.status == 200 && answer.body == after[address], "\(address) changed: sent again")
            } else {
                #expect(answer.status == 304, "\(address) unchanged: 304, got \(answer.status)")
                revalidated += 1
            }
        }
        #expect(revalidated == after.count - changed.count)

        let document = work.file("seoul.tilejson")
        try HTTPClient().get(HTTPRequest(url: server.base + "/seoul.json")).body.write(to: URL(fileURLWithPath: document))
        let check = try runProcess("/usr/bin/python3", [
            "-c", "import json, sys, jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))",
            try TestPaths.shared("tilejson/schema-3.0.0.json"), document,
        ])
        #expect(check.status == 0, "\(check.stderr)")
    }
}
