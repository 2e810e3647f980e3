import Foundation
import TestSupport
import Testing
@testable import MapGateServer

/// The header fields of an answer as they reach the client, on either library
/// (`Tests/http-suites` runs this on libmicrohttpd too): a prepared answer (a cached tile) is
/// sent again and again with its fields as made, one `Content-Length` whatever the handler put,
/// and a field that would split the answer (a line break, a NUL) is never written: the answer is
/// 500. The fields are laid out on the stack for h2o's glue since issue 42 (item 2).
@Suite struct HTTPAnswerHeaderTests {
    static let body = Data((0..<5_000).map { UInt8($0 % 251) })
    static let prepared = HTTPPreparedResponse(
        status: 200,
        headers: [("Content-Type", "image/png"), ("Content-Length", "1"), ("ETag", "\"" + String(repeating: "e", count: 40) + "\"")],
        body: HTTPBodyBytes(body))
    static let broken = HTTPPreparedResponse(status: 200, headers: [("X-Split", "a\r\nX-Injected: yes")], body: HTTPBodyBytes(Data("tile".utf8)))

    final class Answers: HTTPRequestHandler {
        func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
            switch request.path {
            case "/prepared": HTTPServerResponse(prepared: HTTPAnswerHeaderTests.prepared)
            case "/broken-prepared": HTTPServerResponse(prepared: HTTPAnswerHeaderTests.broken)
            case "/broken": HTTPServerResponse(status: 200, headers: [("X-Split", "a\nX-Injected: yes")], body: Data("ok\n".utf8))
            case "/nul": HTTPServerResponse(status: 200, headers: [("X-Nul", "a\u{0}b")], body: Data("ok\n".utf8))
            default: HTTPServerResponse(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Length", "99")], body: Data("ok\n".utf8))
            }
        }
    }

    let server: HTTPServer

    init() throws {
        server = try HTTPServer(settings: .loopback) { Answers() }
    }

    func get(_ path: String, method: String = "GET", on connection: RawConnection) -> RawConnection.Response? {
        connection.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return connection.readResponse(head: method == "HEAD")
    }

    /// 200 times on one connection, and from another: the same fields and body each time, and
    /// the body's own length once.
    @Test func aPreparedAnswerIsSentWithItsFieldsEveryTime() throws {
        defer { server.stop() }
        for _ in 0..<2 {
            let connection = try RawConnection(port: server.port, timeout: 3)
            for _ in 0..<200 {
                let answer = try #require(get("/prepared", on: connection))
                #expect(answer.status == 200)
                #expect(answer.body == Self.body)
                let lengths = answer.headerLines.filter { $0.name == "content-length" }.map(\.value)
                #expect(lengths == ["5000"], "\(answer.headerLines)")
                #expect(answer.headers["etag"] == "\"" + String(repeating: "e", count: 40) + "\"")
                #expect(answer.headers["content-type"] == "image/png")
            }
        }
        let head = try #require(get("/prepared", method: "HEAD", on: try RawConnection(port: server.port, timeout: 3)))
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers["content-length"] == "5000")
    }

    /// A handler's own `Content-Length` is not sent beside the real one.
    @Test func anAnswerHasOneLengthItsBodys() throws {
        defer { server.stop() }
        let answer = try #require(get("/plain", on: try RawConnection(port: server.port, timeout: 3)))
        #expect(answer.headerLines.filter { $0.name == "content-length" }.map(\.value) == ["3"], "\(answer.headerLines)")
        #expect(answer.body == Data("ok\n".utf8))
    }

    /// A field holding a line break or a NUL is never written (it would split the answer and
    /// let a value add fields of its own): 500, prepared or not.
    @Test(arguments: ["/broken", "/broken-prepared", "/nul"])
    func aFieldThatWouldSplitTheAnswerIsNeverWritten(_ path: String) throws {
        defer { server.stop() }
        let answer = try #require(get(path, on: try RawConnection(port: server.port, timeout: 3)))
        #expect(answer.status == 500, "\(answer.headerLines)")
        #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix("bad response header"))
        #expect(!answer.headerLines.contains { $0.name == "x-injected" || $0.name == "x-split" || $0.name == "x-nul" }, "\(answer.headerLines)")
    }
}
