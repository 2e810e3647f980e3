import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP client for what libcurl will not do: pipelining, half requests, odd methods.
public final class RawConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    public struct Response {
        public var status: Int
        /// The last value of each header, by lower-cased name.
        public var headers: [String: String]
        /// Every header line in order, repeats included (lower-cased names).
        public var headerLines: [(name: String, value: String)]
        public var body: Data

        /// Every value sent for `name` (lower-cased), in order.
        public func values(of name: String) -> [String] { headerLines.filter { $0.name == name }.map(\.value) }
    }

    public init(port: UInt16, timeout: Double = 5) throws {
        guard let fd = LoopbackSocket.connect(port: port, timeout: timeout) else { throw MissingFixture(path: "a server on 127.0.0.1:\(port)") }
        self.fd = fd
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        send(Data(text.utf8))
    }

    /// Sends `bytes` as they are (any byte, valid UTF-8 or not).
    public func send(_ bytes: Data) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends `text` and closes this side of the connection in the same segment (TCP_CORK holds the
    /// bytes until the FIN joins them), as a client that gives up on its request at once: the
    /// server reads the request and the end together, whatever its timing.
    public func sendAndHangUp(_ text: String) {
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        send(text)
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads one response (a body of `Content-Length` bytes, none for HEAD/304); nil when the
    /// server closed the connection or went silent.
    public func readResponse(head: Bool = false) -> Response? {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
                var headers: [String: String] = [:]
                var headerLines: [(name: String, value: String)] = []
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let name = line[..<colon].lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    headers[name] = value
                    headerLines.append((name, value))
                }
                let length = head || status == 304 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                while buffer.count < end + 4 + length { guard fill() else { return nil } }
                let body = Data(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return Response(status: status, headers: headers, headerLines: headerLines, body: body)
            }
            guard fill() else { return nil }
        }
    }

    /// Every byte the server sends until it closes the connection (or goes silent).
    public func readAll() -> Data {
        while fill() {}
        defer { buffer.removeAll() }
        return Data(buffer)
    }

    /// The status of the answer waiting on the socket, read without taking it (nil while none came).
    public func peekStatus() -> Int? {
        var head = [UInt8](repeating: 0, count: 16)
        let count = head.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard count >= 12 else { return nil }
        return Int(String(decoding: head[9..<12], as: UTF8.self))
    }

    /// True when the server has closed its side (reads end of stream).
    public func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    /// True when the server has closed its side: end of stream, or a reset (a server that closes
    /// with bytes of ours unread resets the connection).
    public func isClosedOrResetByServer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    /// True when the server sent something not read yet (or closed), without waiting.
    public func hasBytesWaiting() -> Bool {
        var byte: UInt8 = 0
        return !buffer.isEmpty || recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// A small receive buffer, so a client that never reads fills it quickly.
    public func shrinkReceiveBuffer() {
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for index in 0...(buffer.count - pattern.count) where buffer[index] == pattern[0] {
            if Array(buffer[index..<(index + pattern.count)]) == pattern { return index }
        }
        return nil
    }
}
