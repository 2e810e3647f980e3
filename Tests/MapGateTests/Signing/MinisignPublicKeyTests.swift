import Foundation
import MapGate
import TestSupport
import Testing

extension SigningTests {
    /// Public keys written by the real `minisign -G`.
    @Suite struct MinisignPublicKeyTests {
        @Test func pubFileAndBareLineGiveTheSameKey() throws {
            let tool = try MinisignTool()
            let pair = try tool.generateKeyPair(named: "publisher")
            let file = try pair.publicKeyText
            let lines = file.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            let fromFile = try MinisignPublicKey(text: file)
            let fromLine = try MinisignPublicKey(text: lines[1])
            let fromCRLF = try MinisignPublicKey(text: file.replacingOccurrences(of: "\n", with: "\r\n"))
            #expect(fromFile == fromLine)
            #expect(fromFile == fromCRLF)
            #expect(fromFile.base64 == lines[1])
            #expect(fromFile.base64.hasPrefix("RW"))
            // minisign names the key in the comment line by the number keyID.value is; minisign 0.11
            // drops leading zeros (`%lX`) where keyID.hex keeps 16 digits, as newer minisign does.
            let printed = try #require(lines[0].split(separator: " ").last.map(String.init))
            #expect(lines[0] == "untrusted comment: minisign public key \(printed)")
            #expect(UInt64(printed, radix: 16) == fromFile.keyID.value)
            #expect(fromFile.keyID.hex.hasSuffix(printed) && fromFile.keyID.hex.count == 16)
            #expect(fromFile.fileText == "untrusted comment: minisign public key \(fromFile.keyID.hex)\n\(lines[1])\n")
            #expect(fromFile.keyID.bytes == Array([UInt8](Data(base64Encoded: lines[1]) ?? Data())[2..<10]))
        }

        /// The form `minisign -G` prints for `-P` is the same key.
        @Test func keyPrintedByMinisignParses() throws {
            let tool = try MinisignTool()
            let publicFile = tool.directory.file("k.pub")
            let result = try tool.runSucceeding(["-G", "-W", "-p", publicFile, "-s", tool.directory.file("k.key")])
            let printed = try #require(result.stdout.split(separator: " ").last.map(String.init))
            #expect(try MinisignPublicKey(text: printed) == MinisignPublicKey(text: try String(contentsOfFile: publicFile, encoding: .utf8)))
        }

        /// Keys with a leading zero in their id (one in 16) are where minisign 0.11 and `hex` differ
        /// in form; the number is the same.
        @Test func keyIDWithALeadingZeroIsTheNumberMinisignPrints() throws {
            let tool = try MinisignTool()
            var attempts = 0
            var pair = try tool.generateKeyPair(named: "k0")
            var key = try MinisignPublicKey(text: try pair.publicKeyText)
            while key.keyID.value >> 60 != 0, attempts < 200 {
                attempts += 1
                pair = try tool.generateKeyPair(named: "k\(attempts)")
                key = try MinisignPublicKey(text: try pair.publicKeyText)
            }
            try #require(key.keyID.value >> 60 == 0, "no key id with a leading zero in 200 keys")
            #expect(key.keyID.hex.hasPrefix("0"))
            // minisign names this key when a signature by another key is checked against it.
            let other = try tool.generateKeyPair(named: "other")
            let message = try tool.write("m", "m")
            let signature = try tool.sign(message, with: other)
            let minisign = try tool.verify(message, signatureFile: signature, publicKeyFile: pair.publicKeyFile)
            #expect(minisign.status != 0)
            #expect(MinisignTool.printedKeyIDs(in: minisign.stderr).contains(key.keyID.value), "\(minisign.stderr)")
        }

        @Test func keyIDHexIsTheLittleEndianNumber() {
            let id = MinisignKeyID(value: 0x8926_329D_049F_2B13)
            #expect(id.hex == "8926329D049F2B13")
            #expect(id.bytes == [0x13, 0x2B, 0x9F, 0x04, 0x9D, 0x32, 0x26, 0x89])
            #expect(MinisignKeyID(value: 0xAB).hex == "00000000000000AB")
            #expect("\(id)" == "8926329D049F2B13")
        }

        @Test(arguments: [
            ("", "empty"),
            ("untrusted comment: minisign public key 0\n", "comment without key"),
            ("RWQ not base64 !!", "not base64"),
            ("RWQTK58EnTImicKG26nDKcPl5gA99K2OIEgF1MJ7FHn73BaiOEdi", "too short"),
            ("RXQTK58EnTImicKG26nDKcPl5gA99K2OIEgF1MJ7FHn73BaiOEdiklho", "algorithm is not Ed"),
            ("first line\nsecond line\nthird line\n", "three lines, no comment"),
        ])
        func malformedKeysAreRefused(text: String, reason: String) {
            let error = #expect(throws: SignatureError.self, "\(reason)") { try MinisignPublicKey(text: text) }
            guard case .publicKeyMalformed = error else {
                Issue.record("\(reason): expected publicKeyMalformed, got \(String(describing: error))")
                return
            }
            #expect(error?.kind == .badData)
        }
    }
}
