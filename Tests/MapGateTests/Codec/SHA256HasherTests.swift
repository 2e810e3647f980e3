import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct SHA256HasherTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func knownVectors(input: String, digest: String) throws {
        #expect(try SHA256Hasher.hex(of: Data(input.utf8)) == digest)
    }

    @Test func chunkedEqualsWhole() throws {
        let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 31) })
        let hasher = try SHA256Hasher()
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + 997)
            try hasher.update(data[offset..<end])
            offset = end
        }
        #expect(try hasher.finalizeHex() == SHA256Hasher.hex(of: data))
    }

    @Test func streamedFileEqualsSha256sum() throws {
        let file = try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles")
        let result = try runProcess("/usr/bin/sha256sum", [file])
        let expected = String(result.stdout.prefix(64))
        #expect(expected.count == 64)
        #expect(try SHA256Hasher.hex(ofFileAt: file) == expected)
    }
}
