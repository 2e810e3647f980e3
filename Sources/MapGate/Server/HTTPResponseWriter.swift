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

    /// Sends a whole response in one write. `Content-Length` and `Connection` are added here.
    public func respond(
        status: Int, headers: [(String, String)] = [], body: Data = Data(), sendBody: Bool = true
    ) {
        var bytes = head(status: status, headers: headers, contentLength: body.count)
        let headLength = bytes.count
        if sendBody { bytes.append(contentsOf: body) }
        if bytes.withUnsafeBytes({ writeRaw($0) }) { bytesWritten += bytes.count - headLength }
    }

    /// Sends the status line and headers; the body follows with ``writeBody(_:)``.
    public func writeHead(status: Int, headers: [(String, String)]) {
        let bytes = head(status: status, headers: headers, contentLength: nil)
        _ = bytes.withUnsafeBytes { writeRaw($0) }
    }

    private func head(status: Int, headers: [(String, String)], contentLength: Int?) -> [UInt8] {
        self.status = status
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let contentLength { head += "Content-Length: \(contentLength)\r\n" }
        head += keepAlive && !closesConnection ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8)
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
