import Foundation
import MapGate
import TestSupport
import Testing

extension SigningTests {
    /// Password-protected secret keys made by the real `minisign -G` (password on standard input).
    ///
    /// Each decryption is minisign's scrypt at 1 GiB and a few seconds, so the key pair is made once
    /// and the tests run one after the other.
    @Suite(.serialized) struct MinisignEncryptedSecretKeyTests {
        struct EncryptedKeyPair: Sendable {
            let publicKeyText: String
            let secretKeyText: String
            static let password = "correct horse battery staple"
        }

        /// Made on first use; a failure to make it fails every test that needs it.
        static let shared: Result<EncryptedKeyPair, any Error> = Result {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "protected", password: EncryptedKeyPair.password)
            return EncryptedKeyPair(publicKeyText: try pair.publicKeyText, secretKeyText: try pair.secretKeyText)
        }

        static let catalog = Data("{\"regions\":[{\"id\":\"jp-tokyo\"}]}\n".utf8)

        @Test func signatureFromAPasswordProtectedKeyPassesMinisign() throws {
            let keys = try Self.shared.get()
            let secretKey = try MinisignSecretKey(text: keys.secretKeyText, password: EncryptedKeyPair.password)
            let publicKey = try MinisignPublicKey(text: keys.publicKeyText)
            #expect(secretKey.isPasswordProtected)
            #expect(secretKey.keyID == publicKey.keyID)
            #expect(secretKey.publicKey == publicKey)
            #expect(secretKey.hasVerifiedChecksum == MinisignSecretKey.canVerifyChecksums)

            let text = try secretKey.sign(message: Self.catalog, trustedComment: "timestamp:1700000000\tfile:catalog.json\thashed")
            let tool = try MinisignTool()
            let messageFile = try tool.write("catalog.json", Self.catalog)
            let signatureFile = try tool.write("catalog.json.minisig", text)
            let publicKeyFile = try tool.write("protected.pub", keys.publicKeyText)
            let minisign = try tool.verify(messageFile, signatureFile: signatureFile, publicKeyFile: publicKeyFile)
            #expect(minisign.status == 0, "\(minisign.stderr)")
            #expect(try MinisignVerifier(trustedKeys: [publicKey]).verify(signatureFile: Data(text.utf8), message: Self.catalog).keyID == publicKey.keyID)
        }

        @Test func wrongPasswordIsRefused() throws {
            let keys = try Self.shared.get()
            let error = #expect(throws: SignatureError.self) {
                try MinisignSecretKey(text: keys.secretKeyText, password: "incorrect horse battery staple")
            }
            #expect(error == .wrongPassword)
            #expect(error?.kind == .usage)
            #expect(error?.errorDescription?.contains("wrong password") == true)
        }

        @Test func missingPasswordIsRefusedWithoutDerivingAnything() throws {
            let keys = try Self.shared.get()
            let error = #expect(throws: SignatureError.self) { try MinisignSecretKey(text: keys.secretKeyText, password: nil) }
            #expect(error == .passwordRequired)
            #expect(error?.kind == .usage)
        }

        /// `minisign -C -W` removes the password and keeps the real checksum (unlike `-G -W`).
        @Test func keyWhosePasswordMinisignRemovedSigns() throws {
            let keys = try Self.shared.get()
            let tool = try MinisignTool()
            let secretKeyFile = try tool.write("protected.key", keys.secretKeyText)
            let publicKeyFile = try tool.write("protected.pub", keys.publicKeyText)
            try tool.runSucceeding(["-C", "-W", "-s", secretKeyFile], stdin: EncryptedKeyPair.password + "\n")
            let secretKey = try MinisignSecretKey(text: try String(contentsOfFile: secretKeyFile, encoding: .utf8), password: nil)
            #expect(!secretKey.isPasswordProtected)
            #expect(secretKey.hasVerifiedChecksum == MinisignSecretKey.canVerifyChecksums)
            #expect(secretKey.publicKey == (try MinisignPublicKey(text: keys.publicKeyText)))

            let messageFile = try tool.write("catalog.json", Self.catalog)
            let signatureFile = try tool.write("catalog.json.minisig", try secretKey.sign(message: Self.catalog, trustedComment: "after -C"))
            #expect(try tool.verify(messageFile, signatureFile: signatureFile, publicKeyFile: publicKeyFile).status == 0)
        }
    }
}
