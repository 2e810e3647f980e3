import Foundation
import MapGate
import TestSupport
import Testing

extension SigningTests {
    /// Parsing `.minisig` files that the real `minisign` wrote, and damaged copies of them.
    @Suite struct MinisignSignatureTests {
        struct Sample {
            let tool: MinisignTool
            let pair: MinisignTool.KeyPair
            let file: Data
        }

        func sample(untrustedComment: String? = nil, trustedComment: String = "file:catalog.json") throws -> Sample {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let message = try tool.write("catalog.json", "{\"regions\":[]}\n")
            let signature = try tool.sign(message, with: pair, trustedComment: trustedComment, untrustedComment: untrustedComment)
            return Sample(tool: tool, pair: pair, file: try tool.read(signature))
        }

        @Test func fieldsAndTextRoundTrip() throws {
            let sample = try sample(untrustedComment: "made by the release job", trustedComment: "timestamp:1700000000\tZürich")
            let signature = try MinisignSignature(data: sample.file)
            let publicKey = try MinisignPublicKey(text: try sample.pair.publicKeyText)
            #expect(signature.algorithm == .prehashed)
            #expect(signature.keyID == publicKey.keyID)
            #expect(signature.untrustedComment == "made by the release job")
            #expect(signature.trustedComment == "timestamp:1700000000\tZürich")
            // minisign writes exactly the form `text` renders.
            #expect(Data(signature.text.utf8) == sample.file)
            #expect(try MinisignSignature(text: signature.text) == signature)
        }

        /// A line that is present but not what minisign writes there, and the line the error names.
        enum Damage: String, CaseIterable, Sendable {
            case untrustedCommentPrefixMissing
            case untrustedCommentTooLong
            case signatureNotBase64
            case signatureTooShort
            case trustedCommentPrefixMissing
            case trustedCommentNotUTF8
            case trustedCommentWithCarriageReturn
            case trustedCommentTooLong
            case trustedCommentSignatureCut
            case trustedCommentSignatureNotBase64

            var line: Int {
                switch self {
                case .untrustedCommentPrefixMissing, .untrustedCommentTooLong: 1
                case .signatureNotBase64, .signatureTooShort: 2
                case .trustedCommentPrefixMissing, .trustedCommentNotUTF8, .trustedCommentWithCarriageReturn, .trustedCommentTooLong: 3
                case .trustedCommentSignatureCut, .trustedCommentSignatureNotBase64: 4
                }
            }
        }

        @Test(arguments: Damage.allCases)
        func malformedLinesAreNamed(_ damage: Damage) throws {
            let sample = try sample()
            let editor = SignatureFileEditor(data: sample.file)
            var bytes: Data
            switch damage {
            case .untrustedCommentPrefixMissing:
                bytes = editor.replacing(line: 1, with: "comment: signature from minisign secret key").data
            case .untrustedCommentTooLong:
                bytes = editor.replacing(line: 1, with: "untrusted comment: " + String(repeating: "x", count: 1004)).data
            case .signatureNotBase64:
                bytes = editor.replacing(line: 2, with: "not base64 at all!").data
            case .signatureTooShort:
                bytes = try editor.editingBytes(ofLine: 2) { $0.removeLast() }.data
            case .trustedCommentPrefixMissing:
                bytes = editor.replacing(line: 3, with: "file:catalog.json").data
            case .trustedCommentNotUTF8:
                bytes = Data((editor.lines[0] + "\n" + editor.lines[1] + "\ntrusted comment: ").utf8) + Data([0xFF])
                    + Data(("\n" + editor.lines[3] + "\n").utf8)
            case .trustedCommentWithCarriageReturn:
                bytes = editor.replacing(line: 3, with: "trusted comment: file:catalog.json\rtimestamp:1").data
            case .trustedCommentTooLong:
                bytes = editor.replacing(line: 3, with: "trusted comment: " + String(repeating: "y", count: 8174)).data
            case .trustedCommentSignatureCut:
                bytes = editor.replacing(line: 4, with: String(editor.lines[3].prefix(40))).data
            case .trustedCommentSignatureNotBase64:
                bytes = editor.replacing(line: 4, with: "!!!!").data
            }
            let error = #expect(throws: SignatureError.self) { try MinisignSignature(data: bytes) }
            guard case .signatureLineMalformed(let line, let problem) = error else {
                Issue.record("expected a malformed line \(damage.line), got \(String(describing: error))")
                return
            }
            #expect(line == damage.line, "\(problem)")
            #expect(error?.errorDescription?.contains("line \(damage.line)") == true)

            // minisign refuses these files too, but one: it cuts a line at a CR, so it verifies the
            // trusted comment before the CR and ignores what follows. We refuse such a file.
            let message = sample.tool.directory.file("catalog.json")
            let damaged = try sample.tool.write("damaged.minisig", bytes)
            let minisign = try sample.tool.verify(message, signatureFile: damaged, publicKeyFile: sample.pair.publicKeyFile)
            if damage == .trustedCommentWithCarriageReturn {
                #expect(minisign.status == 0)
                #expect(minisign.stdout.contains("Trusted comment: file:catalog.json\n"), "\(minisign.stdout)")
            } else {
                #expect(minisign.status != 0, "minisign accepted the file with \(damage)")
            }
        }

        /// The longest comment lines minisign reads (its fgets buffers, less prefix and LF) are
        /// accepted, and one byte more is refused, by minisign and by us. `minisign -S` itself cannot
        /// write a trusted comment over about 4 KiB (its xfprintf buffer), so we sign these.
        @Test func longestCommentLinesAreTheOnesMinisignReads() throws {
            let trustedComment = String(repeating: "t", count: 8190 - "trusted comment: ".utf8.count)
            let untrustedComment = String(repeating: "u", count: 1022 - "untrusted comment: ".utf8.count)
            let sample = try sample()
            let secretKey = try MinisignSecretKey(text: try sample.pair.secretKeyText, password: nil)
            let message = Data("{\"regions\":[]}\n".utf8)
            let text = try secretKey.sign(message: message, trustedComment: trustedComment, untrustedComment: untrustedComment)
            let signature = try MinisignSignature(text: text)
            #expect(signature.trustedComment == trustedComment)
            #expect(signature.untrustedComment == untrustedComment)
            let verifier = MinisignVerifier(trustedKeys: [try MinisignPublicKey(text: try sample.pair.publicKeyText)])
            #expect(try verifier.verify(signature: signature, message: message).trustedComment == trustedComment)
            let messageFile = sample.tool.directory.file("catalog.json")
            let longest = try sample.tool.write("longest.minisig", text)
            #expect(try sample.tool.verify(messageFile, signatureFile: longest, publicKeyFile: sample.pair.publicKeyFile).status == 0)

            let editor = SignatureFileEditor(text)
            for (line, longer) in [(1, editor.lines[0] + "u"), (3, editor.lines[2] + "t")] {
                let tooLong = editor.replacing(line: line, with: longer)
                let error = #expect(throws: SignatureError.self) { try MinisignSignature(data: tooLong.data) }
                guard case .signatureLineMalformed(line, let problem) = error else {
                    Issue.record("line \(line): expected it malformed, got \(String(describing: error))")
                    continue
                }
                #expect(problem.contains("longer than"), "\(problem)")
                let file = try sample.tool.write("too-long-\(line).minisig", tooLong.data)
                let minisign = try sample.tool.verify(messageFile, signatureFile: file, publicKeyFile: sample.pair.publicKeyFile)
                #expect(minisign.status != 0)
                #expect(minisign.stderr.contains("too long"), "\(minisign.stderr)")
            }
        }
    }
}
