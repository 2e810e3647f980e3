import Foundation
import MapGate
import TestSupport
import Testing

extension SigningTests {
    /// Signatures made by the real `minisign`, checked by ``MinisignVerifier``; every tampered file is
    /// also shown to `minisign -V`, which must refuse it too.
    @Suite struct MinisignVerifierTests {
        /// A catalog-like file, large enough to span several BLAKE2b blocks.
        static let catalog: Data = {
            let regions = (0..<400).map { index in
                #"{"id":"region-\#(index)","version":"2025.\#(index % 12 + 1)","bytes":\#(index * 7919),"sha256":"\#(String(repeating: "ab", count: 32))"}"#
            }
            return Data(("{\"regions\":[" + regions.joined(separator: ",") + "]}\n").utf8)
        }()

        struct Signed {
            let tool: MinisignTool
            let pair: MinisignTool.KeyPair
            let publicKey: MinisignPublicKey
            let messageFile: String
            let signatureFile: String
            var message: Data { get throws { try tool.read(messageFile) } }
            var signature: Data { get throws { try tool.read(signatureFile) } }
        }

        func signedCatalog(legacy: Bool = false, trustedComment: String = "timestamp:1700000000\tfile:catalog.json\thashed", message: Data = catalog) throws -> Signed {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let messageFile = try tool.write("catalog.json", message)
            let signatureFile = try tool.sign(messageFile, with: pair, trustedComment: trustedComment, legacy: legacy)
            return Signed(
                tool: tool, pair: pair, publicKey: try MinisignPublicKey(text: try pair.publicKeyText),
                messageFile: messageFile, signatureFile: signatureFile)
        }

        @Test func catalogSignedByMinisignVerifies() throws {
            let signed = try signedCatalog()
            let verification = try MinisignVerifier(trustedKeys: [signed.publicKey])
                .verify(signatureFile: try signed.signature, message: try signed.message)
            #expect(verification.keyID == signed.publicKey.keyID)
            #expect(verification.algorithm == .prehashed)
            #expect(verification.trustedComment == "timestamp:1700000000\tfile:catalog.json\thashed")
            #expect(try signed.publicKey.verify(signature: MinisignSignature(data: signed.signature), message: signed.message) == verification)
        }

        @Test func minisignsDefaultTrustedCommentVerifies() throws {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let messageFile = try tool.write("catalog.json", Self.catalog)
            let signatureFile = try tool.sign(messageFile, with: pair)
            let verification = try MinisignVerifier(trustedKeys: [MinisignPublicKey(text: try pair.publicKeyText)])
                .verify(signatureFile: try tool.read(signatureFile), message: Self.catalog)
            #expect(verification.trustedComment.hasPrefix("timestamp:"))
            #expect(verification.trustedComment.hasSuffix("\tfile:catalog.json\thashed"))
        }

        @Test func legacySignatureVerifiesUnlessRefused() throws {
            let signed = try signedCatalog(legacy: true, trustedComment: "legacy")
            let verification = try MinisignVerifier(trustedKeys: [signed.publicKey])
                .verify(signatureFile: try signed.signature, message: try signed.message)
            #expect(verification.algorithm == .legacy)
            #expect(verification.trustedComment == "legacy")

            let refusing = MinisignVerifier(trustedKeys: [signed.publicKey], acceptsLegacySignatures: false)
            let error = #expect(throws: SignatureError.self) {
                try refusing.verify(signatureFile: try signed.signature, message: try signed.message)
            }
            #expect(error == .legacySignatureRefused(keyID: signed.publicKey.keyID))
            // minisign -V -H refuses it as well.
            let minisign = try signed.tool.run(["-V", "-H", "-p", signed.pair.publicKeyFile, "-m", signed.messageFile, "-x", signed.signatureFile])
            #expect(minisign.status != 0)
        }

        @Test(arguments: [false, true])
        func emptyMessage(legacy: Bool) throws {
            let signed = try signedCatalog(legacy: legacy, message: Data())
            let verification = try MinisignVerifier(trustedKeys: [signed.publicKey])
                .verify(signatureFile: try signed.signature, message: Data())
            #expect(verification.keyID == signed.publicKey.keyID)
            #expect(throws: SignatureError.messageMismatch(keyID: signed.publicKey.keyID)) {
                try MinisignVerifier(trustedKeys: [signed.publicKey]).verify(signatureFile: try signed.signature, message: Data([0]))
            }
        }

        /// minisign 0.11 verifies a signature file with CRLF line ends, so we do too.
        @Test func crlfLineEndsAreAcceptedAsMinisignAcceptsThem() throws {
            let signed = try signedCatalog()
            let crlf = String(decoding: try signed.signature, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n")
            let crlfFile = try signed.tool.write("crlf.minisig", crlf)
            let minisign = try signed.tool.verify(signed.messageFile, signatureFile: crlfFile, publicKeyFile: signed.pair.publicKeyFile)
            #expect(minisign.status == 0, "minisign refused CRLF: \(minisign.stderr)")

            let verification = try MinisignVerifier(trustedKeys: [signed.publicKey])
                .verify(signatureFile: Data(crlf.utf8), message: try signed.message)
            #expect(verification.trustedComment == "timestamp:1700000000\tfile:catalog.json\thashed")
        }

        /// Like minisign: no LF needed after line 4, and lines after it are ignored.
        @Test(arguments: ["no final LF", "a fifth line"])
        func endOfFileIsReadAsMinisignReadsIt(variant: String) throws {
            let signed = try signedCatalog()
            var text = String(decoding: try signed.signature, as: UTF8.self)
            if variant == "no final LF" { text.removeLast() } else { text += "whatever comes after\n" }
            let file = try signed.tool.write("variant.minisig", text)
            #expect(try signed.tool.verify(signed.messageFile, signatureFile: file, publicKeyFile: signed.pair.publicKeyFile).status == 0)
            let verification = try MinisignVerifier(trustedKeys: [signed.publicKey]).verify(signatureFile: Data(text.utf8), message: try signed.message)
            #expect(verification.keyID == signed.publicKey.keyID)
        }

        @Test func keyRotationAcceptsEitherTrustedKey() throws {
            let tool = try MinisignTool()
            let old = try tool.generateKeyPair(named: "old")
            let new = try tool.generateKeyPair(named: "new")
            let oldKey = try MinisignPublicKey(text: try old.publicKeyText)
            let newKey = try MinisignPublicKey(text: try new.publicKeyText)
            #expect(oldKey.keyID != newKey.keyID)
            let messageFile = try tool.write("catalog.json", Self.catalog)
            let byOld = try tool.read(try tool.sign(messageFile, with: old, signatureFile: tool.directory.file("old.minisig")))
            let byNew = try tool.read(try tool.sign(messageFile, with: new, signatureFile: tool.directory.file("new.minisig")))

            let both = MinisignVerifier(trustedKeys: [oldKey, newKey])
            #expect(try both.verify(signatureFile: byOld, message: Self.catalog).keyID == oldKey.keyID)
            #expect(try both.verify(signatureFile: byNew, message: Self.catalog).keyID == newKey.keyID)

            // Once the old key is retired, its signatures name it as untrusted.
            let error = #expect(throws: SignatureError.self) {
                try MinisignVerifier(trustedKeys: [newKey]).verify(signatureFile: byOld, message: Self.catalog)
            }
            #expect(error == .unknownKeyID(oldKey.keyID, trusted: [newKey.keyID]))
            let description = error?.errorDescription ?? ""
            #expect(description.contains(oldKey.keyID.hex) && description.contains(newKey.keyID.hex), "\(description)")
            #expect(error?.kind == .badData)
        }

        /// A trusted key that merely shares the signer's id does not stop the real one from verifying.
        @Test func everyTrustedKeyWithTheIDIsTried() throws {
            let signed = try signedCatalog()
            let other = try signed.tool.generateKeyPair(named: "other")
            let otherKey = try MinisignPublicKey(text: try other.publicKeyText)
            let impostorBytes = Array("Ed".utf8) + signed.publicKey.keyID.bytes + [UInt8](Data(base64Encoded: otherKey.base64) ?? Data()).suffix(32)
            let impostor = try MinisignPublicKey(text: Data(impostorBytes).base64EncodedString())
            #expect(impostor.keyID == signed.publicKey.keyID)
            #expect(impostor != signed.publicKey)

            let verification = try MinisignVerifier(trustedKeys: [impostor, signed.publicKey])
                .verify(signatureFile: try signed.signature, message: try signed.message)
            #expect(verification.keyID == signed.publicKey.keyID)
            #expect(throws: SignatureError.messageMismatch(keyID: signed.publicKey.keyID)) {
                try MinisignVerifier(trustedKeys: [impostor]).verify(signatureFile: try signed.signature, message: try signed.message)
            }
        }

        @Test func noTrustedKeysNamesTheSigner() throws {
            let signed = try signedCatalog()
            let error = #expect(throws: SignatureError.self) {
                try MinisignVerifier(trustedKeys: []).verify(signatureFile: try signed.signature, message: try signed.message)
            }
            #expect(error == .unknownKeyID(signed.publicKey.keyID, trusted: []))
            #expect(error?.errorDescription?.contains("no key is trusted") == true)
        }

        enum Tampering: String, CaseIterable, Sendable {
            case messageByteFlipped
            case messageByteAppended
            case signatureByteFlipped
            case trustedCommentChanged
            case trustedCommentSignatureByteFlipped
            case keyIDChanged
            case algorithmUnknown
            case algorithmSwappedToLegacy
        }

        @Test(arguments: Tampering.allCases)
        func tamperingIsCaughtAndNamed(_ tampering: Tampering) throws {
            let signed = try signedCatalog()
            let keyID = signed.publicKey.keyID
            var message = try signed.message
            var file = SignatureFileEditor(data: try signed.signature)
            let expected: SignatureError
            var changedKeyID = keyID
            switch tampering {
            case .messageByteFlipped:
                message[message.count / 2] ^= 0x01
                expected = .messageMismatch(keyID: keyID)
            case .messageByteAppended:
                message.append(0x0A)
                expected = .messageMismatch(keyID: keyID)
            case .signatureByteFlipped:
                file = try file.editingBytes(ofLine: 2) { $0[40] ^= 0x80 }
                expected = .messageMismatch(keyID: keyID)
            case .trustedCommentChanged:
                file = file.replacing(line: 3, with: "trusted comment: timestamp:1900000000\tfile:catalog.json\thashed")
                expected = .trustedCommentMismatch(keyID: keyID)
            case .trustedCommentSignatureByteFlipped:
                file = try file.editingBytes(ofLine: 4) { $0[0] ^= 0x01 }
                expected = .trustedCommentMismatch(keyID: keyID)
            case .keyIDChanged:
                file = try file.editingBytes(ofLine: 2) { $0[2] ^= 0xFF }
                changedKeyID = MinisignKeyID(value: keyID.value ^ 0xFF)
                expected = .unknownKeyID(changedKeyID, trusted: [keyID])
            case .algorithmUnknown:
                file = try file.editingBytes(ofLine: 2) { $0[0] = UInt8(ascii: "X"); $0[1] = UInt8(ascii: "y") }
                expected = .unknownAlgorithm("\"Xy\"")
            case .algorithmSwappedToLegacy:
                file = try file.editingBytes(ofLine: 2) { $0[1] = UInt8(ascii: "d") }
                expected = .messageMismatch(keyID: keyID)
            }

            let error = #expect(throws: SignatureError.self) {
                try MinisignVerifier(trustedKeys: [signed.publicKey]).verify(signatureFile: file.data, message: message)
            }
            #expect(error == expected)
            #expect(error?.kind == .badData)
            if case .messageMismatch = expected {
                #expect(error?.errorDescription?.contains("the file changed after signing") == true)
            }

            let tamperedMessage = try signed.tool.write("tampered.json", message)
            let tamperedSignature = try signed.tool.write("tampered.minisig", file.data)
            let minisign = try signed.tool.verify(tamperedMessage, signatureFile: tamperedSignature, publicKeyFile: signed.pair.publicKeyFile)
            #expect(minisign.status != 0, "minisign accepted the file with \(tampering)")
            if tampering == .keyIDChanged {
                // minisign names the same id.
                #expect(MinisignTool.printedKeyIDs(in: minisign.stderr).first == changedKeyID.value, "\(minisign.stderr)")
            }
        }

        @Test(arguments: 0...3)
        func truncatedFilesSayWhichLineIsMissing(keptLines: Int) throws {
            let signed = try signedCatalog()
            let truncated = SignatureFileEditor(data: try signed.signature).keepingLines(keptLines).data
            let error = #expect(throws: SignatureError.self) {
                try MinisignVerifier(trustedKeys: [signed.publicKey]).verify(signatureFile: truncated, message: try signed.message)
            }
            if keptLines == 0 {
                #expect(truncated.isEmpty)
                #expect(error == .signatureFileEmpty)
            } else {
                #expect(error == .signatureFileTruncated(missingLine: keptLines + 1))
                #expect(error?.errorDescription?.contains("line \(keptLines + 1)") == true)
            }
            let file = try signed.tool.write("truncated.minisig", truncated)
            #expect(try signed.tool.verify(signed.messageFile, signatureFile: file, publicKeyFile: signed.pair.publicKeyFile).status != 0)
        }

        @Test func oversizedSignatureFileIsNotRead() throws {
            let signed = try signedCatalog()
            let padded = try signed.signature + Data(repeating: 0x41, count: MinisignSignature.maximumFileSize)
            let error = #expect(throws: SignatureError.self) {
                try MinisignVerifier(trustedKeys: [signed.publicKey]).verify(signatureFile: padded, message: try signed.message)
            }
            #expect(error == .signatureFileTooLarge(byteCount: padded.count, limit: MinisignSignature.maximumFileSize))
        }
    }
}
