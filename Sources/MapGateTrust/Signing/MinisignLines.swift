import FoundationEssentials
import MapGateBase

/// The lines of a small minisign text file (a signature, a public or a secret key), split the way
/// minisign reads them: at LF, with one CR before the LF dropped (minisign 0.11 verifies CRLF
/// files; its `trim` removes CR and LF).
struct MinisignLines {
    struct Line {
        /// The line without its end (LF or CRLF).
        let content: ArraySlice<UInt8>
        /// How many bytes minisign's `fgets` buffer needs for the line before its LF (the CR counts).
        let rawLength: Int
        /// Whether an LF ended the line (false only for the file's last line).
        let isTerminated: Bool

        var text: String { String(decoding: content, as: UTF8.self) }

        /// Whether the content holds a CR or a NUL: minisign would cut the line there (its `trim`
        /// and C strings), so such a line does not mean the same to minisign and to us.
        var hasControlBreak: Bool { content.contains(0x0D) || content.contains(0) }

        func hasPrefix(_ prefix: String) -> Bool {
            content.starts(with: prefix.utf8)
        }

        /// The content after `prefix`, which the caller checked with ``hasPrefix(_:)``.
        func dropping(_ prefix: String) -> ArraySlice<UInt8> {
            content.dropFirst(prefix.utf8.count)
        }
    }

    let lines: [Line]

    init(_ bytes: [UInt8]) {
        var lines: [Line] = []
        var start = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            lines.append(Self.line(bytes[start..<index], isTerminated: true))
            start = index + 1
        }
        if start < bytes.count {
            lines.append(Self.line(bytes[start...], isTerminated: false))
        }
        self.lines = lines
    }

    init(_ text: String) {
        self.init(Array(text.utf8))
    }

    private static func line(_ raw: ArraySlice<UInt8>, isTerminated: Bool) -> Line {
        let content = raw.last == 0x0D ? raw.dropLast() : raw
        return Line(content: content, rawLength: raw.count, isTerminated: isTerminated)
    }

    /// Line `number`, counting from 1, or nil past the end.
    func line(_ number: Int) -> Line? {
        lines.indices.contains(number - 1) ? lines[number - 1] : nil
    }

    /// The base64 payload of a key file: the line after an `untrusted comment:` line, or the only
    /// line of a bare key (minisign's `-P` form). Surrounding blanks are ignored. Nil when the text
    /// is neither shape.
    func keyPayload() -> String? {
        let meaningful = lines.map { $0.text.trimmingWhitespace() }
        var remaining = meaningful[...]
        while remaining.last?.isEmpty == true { remaining = remaining.dropLast() }
        while remaining.first?.isEmpty == true { remaining = remaining.dropFirst() }
        guard let first = remaining.first else { return nil }
        if first.hasPrefix("untrusted comment:") {
            let rest = remaining.dropFirst()
            guard let payload = rest.first, !payload.isEmpty else { return nil }
            return payload
        }
        return remaining.count == 1 ? first : nil
    }
}
