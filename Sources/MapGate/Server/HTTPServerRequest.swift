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
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the client wants the connection kept open after the response.
    public var wantsKeepAlive: Bool {
        let connection = header("Connection")?.lowercased() ?? ""
        if version == "HTTP/1.0" { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }

    /// Parses the head of a request (request line and header lines, without the blank line).
    static func parse(head: some Collection<UInt8>) -> HTTPServerRequest? {
        guard let text = String(bytes: head, encoding: .utf8) else { return nil }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1."), requestLine[1].first == "/" else { return nil }
        let method = String(requestLine[0])
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return nil }
        let target = String(requestLine[1])
        let rawPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = rawPath[0].removingPercentEncoding else { return nil }
        var headers: [(String, String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
            let name = String(line[..<colon])
            guard !name.contains(" ") else { return nil }
            headers.append((name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return HTTPServerRequest(
            method: method, target: target, path: path, query: rawPath.count > 1 ? String(rawPath[1]) : nil,
            version: String(requestLine[2]), headers: headers)
    }
}
