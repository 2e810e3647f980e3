import CCrypto
import MapGate
@testable import MapGateBase
import Testing

/// Every digest goes through one context whose libcrypto calls are checked: a failure is an
/// error naming the call, never a digest of nothing.
@Suite struct EVPDigestContextTests {
    @Test func anAlgorithmLibcryptoDoesNotHaveIsAnError() throws {
        let context = try EVPDigestContext()
        let error = #expect(throws: LibcryptoError.self) { try context.begin(nil, name: "none") }
        #expect(error?.operation == "EVP_DigestInit_ex (none)")
    }

    /// Finishing a context that was never started fails in libcrypto: said, not ignored.
    @Test func finishingWhatWasNeverStartedIsAnError() throws {
        let context = try EVPDigestContext()
        let error = #expect(throws: LibcryptoError.self) { try context.end(name: "SHA-256") }
        #expect(error?.errorDescription?.hasPrefix("libcrypto: EVP_DigestFinal_ex (SHA-256) failed: ") == true)
    }

    @Test func aStartedDigestIsTheKnownOne() throws {
        let context = try EVPDigestContext()
        try context.begin(ccrypto_EVP_sha256(), name: "SHA-256")
        try Array("abc".utf8).withUnsafeBytes { try context.add($0, name: "SHA-256") }
        #expect(String.hex(try context.end(name: "SHA-256")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
