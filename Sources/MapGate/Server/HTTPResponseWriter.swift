import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes responses on one client connection. Handed to a handler for each request.
public final class HTTPResponseWriter {
    let socket: Int32
    /// Set when the connection must close after this response.
    public private(set) var closesConnection = false
    /// Status and body bytes of the last response, for the access log.
    public private(set) var status = 0
    public private(set) var bytesWritten = 0
    private var failed = false
    var keepAlive = true

    init(socket: Int32) {
        self.socket = socket
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }

    /// Sends a whole response. `Content-Length` and `Connection` are added here.
    public func respond(
        status: Int, headers: [(String, String)] = [], body: Data = Data(), sendBody: Bool = true
    ) {
        writeHead(status: status, headers: headers + [("Content-Length", String(body.count))])
        if sendBody, !body.isEmpty { body.withUnsafeBytes { _ = writeBody($0) } }
    }

    /// Sends the status line and headers; the body follows with ``writeBody(_:)``.
    public func writeHead(status: Int, headers: [(String, String)]) {
        self.status = status
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += keepAlive && !closesConnection ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        head += "\r\n"
        var bytes = Array(head.utf8)
        _ = bytes.withUnsafeMutableBytes { writeRaw(UnsafeRawBufferPointer($0)) }
    }

    /// Sends body bytes; returns false once the client has gone.
    @discardableResult
    public func writeBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ok = writeRaw(bytes)
        if ok { bytesWritten += bytes.count }
        return ok
    }

    /// Closes the connection after this response.
    public func closeAfterResponse() {
        closesConnection = true
    }

    private func writeRaw(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !failed, var pointer = bytes.baseAddress else { return !failed }
        var remaining = bytes.count
        while remaining > 0 {
            let sent = send(socket, pointer, remaining, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                failed = true
                closesConnection = true
                return false
            }
            pointer += sent
            remaining -= sent
        }
        return true
    }
}
