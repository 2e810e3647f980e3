import Foundation
import MapGate
import TestSupport
import Testing

extension SigningTests {
    /// Signing with secret keys the real `minisign -G -W` made; `minisign -V` checks the result.
    /// Password-protected keys are in ``MinisignEncryptedSecretKeyTests``.
    @Suite struct MinisignSecretKeyTests {
        static let catalog = Data("{\"regions\":[{\"id\":\"kr-seoul\",\"version\":\"2025.06\"}]}\n".utf8)

        struct Setup {
            let tool: MinisignTool
            let pair: MinisignTool.KeyPair
            let secretKey: MinisignSecretKey
            let messageFile: String
        }

        func setup(message: Data = catalog) throws -> Setup {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let secretKey = try MinisignSecretKey(text: try pair.secretKeyText, password: nil)
            return Setup(tool: tool, pair: pair, secretKey: secretKey, messageFile: try tool.write("catalog.json", message))
        }

        @Test func ourSignaturePassesMinisign() throws {
            let setup = try setup()
            let publicKey = try MinisignPublicKey(text: try setup.pair.publicKeyText)
            #expect(setup.secretKey.keyID == publicKey.keyID)
            #expect(setup.secretKey.publicKey == publicKey)
            #expect(!setup.secretKey.isPasswordProtected)
            // minisign -W writes a zero checksum, which nothing checks.
            #expect(!setup.secretKey.hasVerifiedChecksum)

            let text = try setup.secretKey.sign(message: Self.catalog, trustedComment: "timestamp:1700000000\tfile:catalog.json\thashed")
            let signatureFile = try setup.tool.write("catalog.json.minisig", text)
            let minisign = try setup.tool.verify(setup.messageFile, signatureFile: signatureFile, publicKeyFile: setup.pair.publicKeyFile)
            #expect(minisign.status == 0, "\(minisign.stderr)")
            #expect(minisign.stdout.contains("Trusted comment: timestamp:1700000000\tfile:catalog.json\thashed"))
            // -H: minisign confirms it is a prehashed (ED) signature.
            let prehashed = try setup.tool.run(["-V", "-H", "-p", setup.pair.publicKeyFile, "-m", setup.messageFile, "-x", signatureFile])
            #expect(prehashed.status == 0, "\(prehashed.stderr)")

            let verification = try MinisignVerifier(trustedKeys: [publicKey]).verify(signatureFile: Data(text.utf8), message: Self.catalog)
            #expect(verification.keyID == publicKey.keyID)
            #expect(text.hasPrefix("untrusted comment: signature from mapgate secret key\n"))
        }

        /// Ed25519 is deterministic: given the same comments, our file and minisign's are identical.
        @Test func signatureIsByteForByteWhatMinisignWrites() throws {
            let setup = try setup()
            let minisigns = try setup.tool.read(
                try setup.tool.sign(
                    setup.messageFile, with: setup.pair, trustedComment: "timestamp:1700000000\tfile:catalog.json",
                    untrustedComment: "signature from mapgate secret key"))
            let ours = try setup.secretKey.sign(message: Self.catalog, trustedComment: "timestamp:1700000000\tfile:catalog.json")
            #expect(Data(ours.utf8) == minisigns)
        }

        @Test(arguments: [
            ("", "an empty trusted comment"),
            ("Zürich 東京\tüber alles", "UTF-8 and a tab"),
            (String(repeating: "t", count: 8173), "the longest trusted comment minisign reads"),
        ])
        func trustedCommentsMinisignAccepts(trustedComment: String, reason: String) throws {
            let setup = try setup()
            let text = try setup.secretKey.sign(message: Self.catalog, trustedComment: trustedComment)
            let signatureFile = try setup.tool.write("catalog.json.minisig", text)
            let minisign = try setup.tool.verify(setup.messageFile, signatureFile: signatureFile, publicKeyFile: setup.pair.publicKeyFile)
            #expect(minisign.status == 0, "\(reason): \(minisign.stderr)")
            #expect(minisign.stdout.contains("Trusted comment: \(trustedComment)\n"), "\(reason)")
        }

        @Test func emptyMessageIsSigned() throws {
            let setup = try setup(message: Data())
            let text = try setup.secretKey.sign(message: Data(), trustedComment: "empty")
            let signatureFile = try setup.tool.write("catalog.json.minisig", text)
            #expect(try setup.tool.verify(setup.messageFile, signatureFile: signatureFile, publicKeyFile: setup.pair.publicKeyFile).status == 0)
        }

        @Test(arguments: [
            ("line one\nline two", "untouched", "a newline in the trusted comment"),
            ("carriage\rreturn", "untouched", "a CR in the trusted comment"),
            ("nul\u{0}byte", "untouched", "a NUL in the trusted comment"),
            (String(repeating: "t", count: 8174), "untouched", "a trusted comment one byte too long"),
            ("fine", "two\nlines", "a newline in the untrusted comment"),
            ("fine", String(repeating: "u", count: 1004), "an untrusted comment one byte too long"),
        ])
        func commentsMinisignCannotReadAreRefused(trustedComment: String, untrustedComment: String, reason: String) throws {
            let setup = try setup()
            let error = #expect(throws: SignatureError.self, "\(reason)") {
                try setup.secretKey.sign(message: Self.catalog, trustedComment: trustedComment, untrustedComment: untrustedComment)
            }
            guard case .commentInvalid = error else {
                Issue.record("\(reason): expected commentInvalid, got \(String(describing: error))")
                return
            }
            #expect(error?.kind == .usage)
        }

        @Test func longestUntrustedCommentPassesMinisign() throws {
            let setup = try setup()
            let text = try setup.secretKey.sign(
                message: Self.catalog, trustedComment: "t", untrustedComment: String(repeating: "u", count: 1003))
            let signatureFile = try setup.tool.write("catalog.json.minisig", text)
            #expect(try setup.tool.verify(setup.messageFile, signatureFile: signatureFile, publicKeyFile: setup.pair.publicKeyFile).status == 0)
        }

        /// Damaged key files: which byte, and what the error must say.
        @Test(arguments: [
            (70, "public half"),  // a seed byte: the public half no longer matches
            (100, "public half"),  // a public-half byte
            (2, "key derivation function"),  // the KDF id
            (4, "checksum algorithm"),  // the checksum id
            (0, "signature algorithm"),  // the signature algorithm
        ])
        func damagedSecretKeyIsRefused(offset: Int, expectedText: String) throws {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let lines = try pair.secretKeyText.split(separator: "\n").map(String.init)
            var bytes = try #require(Data(base64Encoded: lines[1]).map { [UInt8]($0) })
            bytes[offset] ^= 0x20
            let damaged = lines[0] + "\n" + Data(bytes).base64EncodedString() + "\n"
            let error = #expect(throws: SignatureError.self) { try MinisignSecretKey(text: damaged, password: nil) }
            guard case .secretKeyMalformed(let problem) = error else {
                Issue.record("expected secretKeyMalformed, got \(String(describing: error))")
                return
            }
            #expect(problem.contains(expectedText), "\(problem)")
            #expect(error?.kind == .badData)
        }

        @Test func publicKeyFileIsNotASecretKey() throws {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let error = #expect(throws: SignatureError.self) { try MinisignSecretKey(text: try pair.publicKeyText, password: nil) }
            guard case .secretKeyMalformed = error else {
                Issue.record("expected secretKeyMalformed, got \(String(describing: error))")
                return
            }
        }
    }
}
