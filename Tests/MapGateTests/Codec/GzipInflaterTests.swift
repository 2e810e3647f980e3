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

    /// Feeds `data` in pieces of `chunk` bytes, then finishes; returns the output and the size of
    /// each piece handed out.
    func inflate(_ data: Data, chunk: Int, verifiesTrailer: Bool = true) throws -> (output: Data, pieces: [Int]) {
        let inflater = try GzipInflater(verifiesTrailer: verifiesTrailer)
        var output = Data()
        var pieces: [Int] = []
        let sink = { (bytes: UnsafeRawBufferPointer) in
            output.append(contentsOf: bytes)
            pieces.append(bytes.count)
        }
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + chunk)
            try data[offset..<end].withUnsafeBytes { try inflater.inflate($0, sink: sink) }
            offset = end
        }
        try inflater.finish(sink: sink)
        return (output, pieces)
    }

    @Test(arguments: [1, 313, 65_536, 10_000_000])
    func streamedDecompressionOfARealFile(chunk: Int) throws {
        let directory = try TemporaryDirectory()
        let (original, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        #expect(GzipInflater.isGzip(compressed))
        #expect(!GzipInflater.isGzip(original))
        let (output, pieces) = try inflate(compressed, chunk: chunk)
        #expect(output == original)
        // Whole buffers, then the rest once: a caller can write each piece as it comes.
        #expect(original.count > GzipInflater.bufferSize)
        #expect(pieces.dropLast().allSatisfy { $0 == GzipInflater.bufferSize })
        #expect(pieces.last == original.count % GzipInflater.bufferSize)
    }

    @Test func concatenatedMembersAreBothDecompressed() throws {
        let directory = try TemporaryDirectory()
        let (original, compressed) = try gzipped(try TestPaths.shared("mbtiles/mbtileserver-geography-class-png.mbtiles"), in: directory)
        for verifiesTrailer in [true, false] {
            let (output, _) = try inflate(compressed + compressed, chunk: 4096, verifiesTrailer: verifiesTrailer)
            #expect(output == original + original)
        }
    }

    @Test func truncatedStreamFailsAtFinish() throws {
        let directory = try TemporaryDirectory()
        let (_, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        for verifiesTrailer in [true, false] {
            // Cut in the middle, and cut inside the 8-byte trailer.
            for length in [compressed.count / 2, compressed.count - 3] {
                let error = #expect(throws: GzipError.self) {
                    _ = try inflate(compressed.prefix(length), chunk: 4096, verifiesTrailer: verifiesTrailer)
                }
                #expect(error?.localizedDescription.contains("ends before the gzip trailer") == true)
            }
        }
    }

    @Test func corruptStreamFailsWithAReason() throws {
        let directory = try TemporaryDirectory()
        var (_, compressed) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        for index in stride(from: 100, to: 2000, by: 7) { compressed[index] ^= 0x5A }
        let error = #expect(throws: GzipError.self) { _ = try inflate(compressed, chunk: 4096) }
        #expect(error?.localizedDescription.hasPrefix("corrupt gzip data:") == true)
    }

    /// The trailer's CRC-32 is checked by default and skipped on request (packages, whose
    /// SHA-256 covers the same bytes).
    @Test func aWrongCRCFailsOnlyWhenTheTrailerIsVerified() throws {
        let directory = try TemporaryDirectory()
        let (original, gzipped) = try gzipped(try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), in: directory)
        var compressed = gzipped
        compressed[compressed.count - 8] ^= 0x01  // the CRC-32's first byte
        let error = #expect(throws: GzipError.self) { _ = try inflate(compressed, chunk: 65_536) }
        #expect(error?.localizedDescription == "corrupt gzip data: incorrect data check")
        #expect(try inflate(compressed, chunk: 65_536, verifiesTrailer: false).output == original)
    }
}
