import Foundation

/// Edits a `.minisig` file's text the way an attacker or a damaged disk would, line by line.
struct SignatureFileEditor {
    var lines: [String]

    init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    init(data: Data) {
        self.init(String(decoding: data, as: UTF8.self))
    }

    var text: String { lines.joined(separator: "\n") }
    var data: Data { Data(text.utf8) }

    /// Replaces line `number` (from 1).
    func replacing(line number: Int, with text: String) -> SignatureFileEditor {
        var copy = self
        copy.lines[number - 1] = text
        return copy
    }

    /// Rewrites the bytes that base64 line `number` encodes.
    func editingBytes(ofLine number: Int, _ edit: (inout [UInt8]) -> Void) throws -> SignatureFileEditor {
        guard let decoded = Data(base64Encoded: lines[number - 1]) else { throw NotBase64(line: number) }
        var bytes = [UInt8](decoded)
        edit(&bytes)
        return replacing(line: number, with: Data(bytes).base64EncodedString())
    }

    /// The first `count` lines, each ended by LF.
    func keepingLines(_ count: Int) -> SignatureFileEditor {
        var copy = self
        copy.lines = Array(lines.prefix(count)) + (count > 0 ? [""] : [])
        return copy
    }

    struct NotBase64: Error { let line: Int }
}
