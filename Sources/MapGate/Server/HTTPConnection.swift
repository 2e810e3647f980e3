import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads requests from one client connection and runs a handler for each, until the client
/// closes, a limit or timeout is hit, or the server stops.
final class HTTPConnection {
    private let socket: Int32
    private let settings: HTTPServer.Settings
    private let isStopping: () -> Bool
    private var buffer: [UInt8] = []
    private var scanned = 0
    private var chunk = [UInt8](repeating: 0, count: 16 << 10)

    init(socket: Int32, settings: HTTPServer.Settings, isStopping: @escaping () -> Bool) {
        self.socket = socket
        self.settings = settings
        self.isStopping = isStopping
        buffer.reserveCapacity(4096)
    }

    func run(_ handle: (HTTPServerRequest, HTTPResponseWriter) -> Void) {
        while true {
            guard let headEnd = readHead() else { return }
            let parsed = HTTPServerRequest.parse(head: buffer[0..<headEnd])
            let writer = HTTPResponseWriter(socket: socket)
            guard let request = parsed else {
                writer.keepAlive = false
                writer.respond(status: 400, headers: [("Content-Type", "text/plain")], body: Data("malformed request\n".utf8))
                return
            }
            var consumed = headEnd + 4
            if let lengthText = request.header("Content-Length") {
                guard let length = Int(lengthText), length >= 0, length <= 1 << 20 else {
                    writer.keepAlive = false
                    writer.respond(status: 413, body: Data("request body too large\n".utf8))
                    return
                }
                guard readMore(until: consumed + length) else { return }
                consumed += length
            } else if request.header("Transfer-Encoding") != nil {
                writer.keepAlive = false
                writer.respond(status: 400, body: Data("chunked request bodies are not accepted\n".utf8))
                return
            }
            buffer.removeFirst(consumed)
            scanned = 0
            writer.keepAlive = request.wantsKeepAlive && !isStopping()
            handle(request, writer)
            if !writer.keepAlive || writer.closesConnection { return }
        }
    }

    /// Reads until the buffer holds a whole request head; returns the offset of its blank line.
    private func readHead() -> Int? {
        var started = !buffer.isEmpty
        while true {
            if let end = findHeadEnd(), end <= settings.maxHeaderBytes { return end }
            if let first = buffer.first, !(65...90).contains(first) {
                // Not an HTTP request line (a TLS handshake, binary noise): answer at once.
                let writer = HTTPResponseWriter(socket: socket)
                writer.keepAlive = false
                writer.respond(status: 400, body: Data("not an HTTP/1.1 request\n".utf8))
                return nil
            }
            if buffer.count > settings.maxHeaderBytes {
                let writer = HTTPResponseWriter(socket: socket)
                writer.keepAlive = false
                writer.respond(status: 431, body: Data("request header too large\n".utf8))
                return nil
            }
            let timeout = started ? settings.readTimeout : settings.idleTimeout
            guard receive(timeout: timeout, idle: !started) else {
                if started {
                    let writer = HTTPResponseWriter(socket: socket)
                    writer.keepAlive = false
                    writer.respond(status: 408, body: Data("request timed out\n".utf8))
                }
                return nil
            }
            started = true
        }
    }

    private func readMore(until count: Int) -> Bool {
        while buffer.count < count {
            guard receive(timeout: settings.readTimeout, idle: false) else { return false }
        }
        return true
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = max(0, scanned - 3)
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        scanned = buffer.count
        return nil
    }

    /// Waits for bytes with a blocking `recv` that gives up every 250 ms (`SO_RCVTIMEO`, set
    /// by the server), so a stopping server can close an idle connection quickly and a silent
    /// client runs into its timeout. One system call per read in the common case.
    private func receive(timeout: Double, idle: Bool) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        while true {
            if let received = readAvailable(flags: 0) { return received }
            if idle, isStopping() { return false }
            guard DispatchTime.now().uptimeNanoseconds < deadline else { return false }
        }
    }

    /// One `recv`: true when bytes came, false when the peer closed or failed, nil to wait.
    private func readAvailable(flags: Int32) -> Bool? {
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, flags) }
        if count < 0, errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }
}
