import Foundation

/// One parsed HTTP/1.x request.
public struct HTTPServerRequest: Sendable {
    public var method: String
    /// The request target as sent (`/a/b.png?x=1`).
    public var target: String
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query string after `?`, undecoded, or nil.
    public var query: String?
    public var version: String
    public var headers: [(name: String, value: String)]

    public func header(_ name: String) -> String? {
        headers.first { Self.equalIgnoringASCIICase($0.name, name) }?.value
    }

    /// Header names are ASCII; comparing their UTF-8 bytes avoids Foundation on the hot path.
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }

    /// Whether the client wants the connection kept open after the response.
    public var wantsKeepAlive: Bool {
        let connection = header("Connection")?.lowercased() ?? ""
        if version == "HTTP/1.0" { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }

    /// Parses the head of a request (request line and header lines, without the blank line).
    /// Works on bytes: this runs for every request a server answers.
    static func parse(head: ArraySlice<UInt8>) -> HTTPServerRequest? {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: 0x20, omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[1].first == 0x2F, requestLine[2].starts(with: Array("HTTP/1.".utf8)),
            !requestLine[0].isEmpty, requestLine[0].allSatisfy({ (0x41...0x5A).contains($0) })
        else { return nil }
        let target = requestLine[1]
        let question = target.firstIndex(of: 0x3F)
        guard let path = percentDecoded(target[..<(question ?? target.endIndex)]) else { return nil }
        var headers: [(String, String)] = []
        headers.reserveCapacity(lines.count)
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: 0x3A), colon != line.startIndex else { return nil }
            let name = line[..<colon]
            guard !name.contains(0x20), !name.contains(0x09) else { return nil }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return HTTPServerRequest(
            method: String(decoding: requestLine[0], as: UTF8.self), target: String(decoding: target, as: UTF8.self), path: path,
            query: question.map { String(decoding: target[($0 + 1)...], as: UTF8.self) },
            version: String(decoding: requestLine[2], as: UTF8.self), headers: headers)
    }

    /// `%XX` decoding; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.contains(0x25) else { return String(validating: bytes, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x25 {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                    return nil
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
