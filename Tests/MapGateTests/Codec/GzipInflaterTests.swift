import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct GzipInflaterTests {
    /// A real `.gz` made by gzip(1) from a real MBTiles file.
    func gzipped(_ source: String, in directory: TemporaryDirectory) throws -> (original: Data, compressed: Data) {
        let copy = directory.file("input.mbtiles")
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        let result = try runProcess("/bin/gzip", ["-9", "-k", copy])
        #expect(result.status == 0, "gzip failed: \(result.stderr)")
        return (try Data(contentsOf: URL(fileURLWithPath: source)), try Data(contentsOf: URL(fileURLWithPath: copy + ".gz")))
    }

    func inflate(_ data: Data, chunk: Int) throws -> (Data, GzipInflater) {
        let inflater = try GzipInflater()
        var output = Data()
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            try data[offset..<end].withUnsafeBytes { bytes in
                try inflater.inflate(bytes) { output.append(contentsOf: $0) }
            }
            offset = end
        }
        return (output, inflater)
    }

    @Test(arguments: [1, 313, 65_536, 10_000_000])
    func streamedDecompressionOfARealFile(chunk: Int) throws {
        let directory = try TemporaryDirectory()
        let (original, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        #expect(GzipInflater.isGzip(compressed))
        #expect(!GzipInflater.isGzip(original))
        let (output, inflater) = try inflate(compressed, chunk: chunk)
        try inflater.finish()
        #expect(output == original)
    }

    @Test func concatenatedMembersAreBothDecompressed() throws {
        let directory = try TemporaryDirectory()
        let (original, compressed) = try gzipped(try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), in: directory)
        let (output, inflater) = try inflate(compressed + compressed, chunk: 4096)
        try inflater.finish()
        #expect(output == original + original)
    }

    @Test func truncatedStreamFailsAtFinish() throws {
        let directory = try TemporaryDirectory()
        let (_, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        let (_, inflater) = try inflate(compressed.prefix(compressed.count / 2), chunk: 4096)
        #expect(throws: GzipError.self) { try inflater.finish() }
    }

    @Test func corruptStreamFailsWithAReason() throws {
        let directory = try TemporaryDirectory()
        var (_, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        for index in stride(from: 100, to: 2000, by: 7) { compressed[index] ^= 0x5A }
        let error = #expect(throws: GzipError.self) { _ = try inflate(compressed, chunk: 4096) }
        #expect(error?.localizedDescription.hasPrefix("corrupt gzip data:") == true)
    }
}
