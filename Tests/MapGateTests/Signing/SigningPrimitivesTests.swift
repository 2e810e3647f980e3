import Foundation
import MapGate
@testable import MapGateTrust
import TestSupport
import Testing

extension SigningTests {
    /// The libcrypto pieces under the minisign types, against published test vectors and coreutils'
    /// `b2sum`.
    @Suite struct SigningPrimitivesTests {
        func b2sum(_ data: Data, bits: Int) throws -> String {
            let directory = try TemporaryDirectory()
            let file = directory.file("input")
            try data.write(to: URL(fileURLWithPath: file))
            let result = try runProcess("/usr/bin/b2sum", ["-l", String(bits), file])
            #expect(result.status == 0, "b2sum: \(result.stderr)")
            return String(result.stdout.prefix(bits / 4))
        }

        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        }

        func bytes(hex: String) -> [UInt8] {
            let characters = Array(hex)
            return stride(from: 0, to: characters.count, by: 2).compactMap { UInt8(String(characters[$0...$0 + 1]), radix: 16) }
        }

        @Test(arguments: [0, 1, 127, 128, 129, 1 << 20])
        func blake2b512MatchesB2sum(length: Int) throws {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            #expect(hex(try BLAKE2bHasher.digest512(of: data)) == (try b2sum(data, bits: 512)))
        }

        /// BLAKE2b-256 is used only where libcrypto computes it right; OpenSSL before 3.2 ignores the
        /// size parameter and hands back 64 bytes, which the hasher refuses.
        @Test func blake2b256IsUsedOnlyWhereLibcryptoComputesIt() throws {
            let data = Data("Ed12345678 and a secret key".utf8)
            if MinisignSecretKey.canVerifyChecksums {
                let hasher = try BLAKE2bHasher(digestLength: 32)
                try hasher.update(data)
                #expect(hex(try hasher.finalize()) == (try b2sum(data, bits: 256)))
            } else {
                let hasher = try BLAKE2bHasher(digestLength: 32)
                try hasher.update(data)
                #expect(throws: SignatureError.self) { try hasher.finalize() }
            }
            // The system's OpenSSL says which case applies.
            let version = try runProcess("/usr/bin/openssl", ["version"])
            let numbers = version.stdout.split(separator: " ").dropFirst().first?.split(separator: ".").compactMap { Int($0) } ?? []
            let major = try #require(numbers.first)
            let minor = try #require(numbers.dropFirst().first)
            #expect(MinisignSecretKey.canVerifyChecksums == (major > 3 || (major == 3 && minor >= 2)), "\(version.stdout)")
        }

        /// RFC 7914, section 12, second vector.
        @Test func scryptMatchesRFC7914() throws {
            let parameters = ScryptParameters(costLog2: 10, blockSize: 8, parallelism: 16)
            let output = try parameters.deriveKey(password: Array("password".utf8), salt: Array("NaCl".utf8), length: 64)
            #expect(hex(output) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        }

        /// libsodium's `pickparams`: minisign's own limits (SENSITIVE), INTERACTIVE, and the branch
        /// where the operations limit decides.
        @Test(arguments: [
            (UInt64(33_554_432), UInt64(1_073_741_824), 20, UInt64(1)),
            (UInt64(524_288), UInt64(16_777_216), 14, UInt64(1)),
            (UInt64(32_768), UInt64(1 << 30), 10, UInt64(1)),
            (UInt64(1) << 22, UInt64(16_777_216), 14, UInt64(8)),
        ])
        func scryptParametersFollowLibsodium(opsLimit: UInt64, memLimit: UInt64, costLog2: Int, parallelism: UInt64) {
            #expect(ScryptParameters(opsLimit: opsLimit, memLimit: memLimit)
                == ScryptParameters(costLog2: costLog2, blockSize: 8, parallelism: parallelism))
        }

        @Test(arguments: [
            (UInt64.max, UInt64.max),  // the largest limits a file can hold
            (UInt64(1) << 40, UInt64(1) << 34),  // 16 GiB
            (UInt64(1) << 40, UInt64(1) << 20),  // p in the hundreds of thousands
        ])
        func scryptParametersBeyondTheLimitsAreRefused(opsLimit: UInt64, memLimit: UInt64) {
            let parameters = ScryptParameters(opsLimit: opsLimit, memLimit: memLimit)
            let error = #expect(throws: SignatureError.self) {
                try parameters.deriveKey(password: Array("x".utf8), salt: [UInt8](repeating: 0, count: 32), length: 104)
            }
            guard case .secretKeyMalformed = error else {
                Issue.record("expected secretKeyMalformed, got \(String(describing: error))")
                return
            }
        }

        /// RFC 8032, section 7.1, TEST 1 (an empty message) and TEST 2.
        @Test(arguments: [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ])
        func ed25519MatchesRFC8032(seed: String, publicKey: String, message: String, signature: String) throws {
            let signing = try Ed25519Key(seed: bytes(hex: seed))
            #expect(hex(try signing.publicKeyBytes()) == publicKey)
            #expect(hex(try signing.signature(of: bytes(hex: message))) == signature)
            let verifying = try Ed25519Key(publicKey: bytes(hex: publicKey))
            #expect(try verifying.isValidSignature(bytes(hex: signature), of: bytes(hex: message)))
            var wrong = bytes(hex: signature)
            wrong[63] ^= 0x01
            #expect(try !verifying.isValidSignature(wrong, of: bytes(hex: message)))
            #expect(try !verifying.isValidSignature(Array(wrong.prefix(10)), of: bytes(hex: message)))
        }
    }
}
