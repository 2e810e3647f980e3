import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct GzipDeflaterTests {
    /// 3 MiB of mixed text and noise: several chunks, some of it compressible.
    static let sample: Data = {
        var generator = SeededGenerator(seed: 11)
        var bytes = [UInt8]()
        while bytes.count < 3 << 20 {
            bytes += Array("tile \(bytes.count) of the deterministic gzip test\n".utf8)
            for _ in 0..<200 { bytes.append(UInt8.random(in: 0...255, using: &generator)) }
        }
        return Data(bytes)
    }()

    @Test func sameInputSameBytesWithAFixedHeader() throws {
        let first = try GzipDeflater.compress(Self.sample)
        let second = try GzipDeflater.compress(Self.sample)
        #expect(first == second)
        // Magic, deflate, no flags, mtime 0, XFL 0 (level 6), OS 3 (Unix).
        #expect(Array(first.prefix(10)) == [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03])
        #expect(first.count < Self.sample.count)
    }

    @Test func chunkedFeedingGivesTheSameBytes() throws {
        let deflater = try GzipDeflater()
        var output = Data()
        var offset = 0
        while offset < Self.sample.count {
            let end = min(Self.sample.count, offset + 100_003)
            try Self.sample[offset..<end].withUnsafeBytes { try deflater.compress($0) { output.append(contentsOf: $0) } }
            offset = end
        }
        try deflater.finish { output.append(contentsOf: $0) }
        #expect(output == (try GzipDeflater.compress(Self.sample)))
    }

    @Test func realGzipGivesTheOriginalBack() throws {
        let work = try TemporaryDirectory()
        let packed = work.file("sample.gz")
        try GzipDeflater.compress(Self.sample).write(to: URL(fileURLWithPath: packed))
        let result = try runProcess("/bin/gzip", ["-dc", packed])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutData == Self.sample)
        #expect(try GzipInflater.decompress(try GzipDeflater.compress(Data())) == Data())
    }
}
