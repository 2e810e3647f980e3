import Foundation
import TestSupport
import Testing
@testable import MapGateServer

#if canImport(Glibc)
import Glibc
#endif

/// Requests sent behind one another on a connection before their answers came (pipelining), on
/// either library (`Tests/http-suites` runs this on libmicrohttpd too). Found by the attack on h2o
/// as the default (2026-12-07): h2o's glue refused a pipelined head and h2o went on reading it;
/// it wrote a refusal into a streamed answer's body; and it refused empty lines between requests.
@Suite struct HTTPPipeliningTests {
    /// `/stream`: 300,000 bytes (byte i is i % 251) read as the client takes them; anything else:
    /// `ok`.
    final class Answers: HTTPRequestHandler {
        final class Pattern: HTTPBodyStream {
            func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> HTTPBodyChunk {
                for index in 0..<buffer.count { buffer[index] = UInt8((offset + index) % 251) }
                return .bytes(buffer.count)
            }
        }

        func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
            if request.path == "/stream" {
                return HTTPServerResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], length: HTTPPipeliningTests.streamLength, stream: Pattern())
            }
            return HTTPServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data("ok\n".utf8))
        }
    }

    static let streamLength = 300_000

    let server: HTTPServer

    init() throws {
        server = try HTTPServer(settings: .loopback) { Answers() }
    }

    func request(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    }

    /// A head pipelined behind a streamed answer is read once that answer is out whole: the body
    /// arrives intact, then the refusal of the head, then the connection closes (h2o's glue wrote
    /// its 400 after the first 65,536 bytes of the body).
    @Test(arguments: ["GARBAGE\r\n\r\n", "\r\n\r\nGET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"])
    func aHeadPipelinedBehindAStreamedAnswerWaitsForItsEnd(behind: String) throws {
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: 3)
        connection.send(request("/stream") + behind)
        let streamed = try #require(connection.readResponse(), "no answer")
        #expect(streamed.status == 200)
        #expect(streamed.body == Data((0..<Self.streamLength).map { UInt8($0 % 251) }), "the body is the stream's, whole")
        let next = connection.readResponse()
        if behind.hasPrefix("GARBAGE") {
            // libmicrohttpd closes on a request line it cannot parse, without an answer
            #expect(next?.status == (HTTPServer.HTTPLibrary.configured == .h2o ? 400 : nil))
            #expect(connection.readResponse() == nil, "one answer to the refused head at most, then the close")
        } else {
            #expect(next?.status == 200 && next?.body == Data("ok\n".utf8))
        }
    }

    /// A refused head pipelined behind a request gets one answer, and the connection closes (h2o
    /// answered it a second time, its own 400 after the glue's).
    @Test(arguments: [("GARBAGE\r\n\r\n", 400), ("GET /ok HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", 505)])
    func aRefusedPipelinedHeadIsAnsweredOnceAndCloses(behind: String, status: Int) throws {
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: 3)
        connection.send(request("/ok") + behind)
        #expect(connection.readResponse()?.status == 200)
        let refused = connection.readResponse()
        if status == 400 && HTTPServer.HTTPLibrary.configured == .microhttpd {
            // libmicrohttpd closes on a request line it cannot parse, without an answer
            #expect(refused == nil)
        } else {
            #expect(refused?.status == status)
            #expect(refused?.headers["date"] != nil, "\(String(describing: refused?.headerLines))")
        }
        #expect(connection.readResponse() == nil, "no second answer: the connection closed")
    }

    /// Empty lines between pipelined requests are ignored (RFC 9112 §2.2), as before a first one
    /// (h2o's parser skipped one: two got 400).
    @Test func emptyLinesBetweenPipelinedRequestsAreIgnored() throws {
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: 3)
        connection.send(request("/ok") + "\r\n\r\n\n\n" + request("/ok") + "\n\r\n" + request("/ok"))
        for index in 0..<3 { #expect(connection.readResponse()?.status == 200, "request \(index + 1)") }
    }

    /// A pipelined head refused for its size (431) is never answered later, when the client ends
    /// it: the connection is closed after the refusal (h2o read on and answered it with 200).
    @Test func aPipelinedHeadRefusedForItsSizeIsNeverAnsweredLater() throws {
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: 3)
        connection.send(request("/ok") + "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + String(repeating: " ", count: 9_000))
        #expect(connection.readResponse()?.status == 200)
        #expect(connection.readResponse()?.status == 431)
        usleep(300_000)
        connection.send("v\r\n\r\n" + request("/ok"))
        #expect(connection.readResponse() == nil, "nothing answered after the refusal")
    }

    /// In place of the suite's server: one whose head deadline is 1 s.
    func quickServer(idleTimeout: Double) throws -> HTTPServer {
        server.stop()
        var settings = HTTPServer.Settings.loopback
        settings.readTimeout = 1
        settings.idleTimeout = idleTimeout
        return try HTTPServer(settings: settings) { Answers() }
    }

    /// A partial head pipelined behind a request has the head's deadline from the answer on, not
    /// the idle timeout (found by an attack: 30 s instead of 10). h2o's glue says what it read
    /// already; libmicrohttpd does not, so there the connection still closes at the idle timeout,
    /// without a 408.
    @Test func aPartialHeadPipelinedBehindARequestHasTheHeadsDeadline() throws {
        let quick = try quickServer(idleTimeout: 4)
        defer { quick.stop() }
        let connection = try RawConnection(port: quick.port, timeout: 8)
        let started = Date()
        connection.send(request("/ok") + "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(connection.readResponse()?.status == 200)
        if HTTPServer.HTTPLibrary.configured == .h2o {
            #expect(connection.readResponse()?.status == 408)
            #expect(Date().timeIntervalSince(started) < 3, "the head's deadline of 1 s, give or take the watchdog's tick")
        } else {
            #expect(connection.readResponse() == nil, "libmicrohttpd: closed at the idle timeout, no 408")
            #expect(Date().timeIntervalSince(started) >= 3.5, "the idle timeout of 4 s")
        }
    }

    /// A connection that waits between requests, all its bytes read, has the idle timeout, not
    /// the head's deadline: after each answer the bytes read so far (h2o's glue counts them, so
    /// that the kernel is not asked after every answer) are what a next head is told from, and a
    /// miscount would have it time out as a head begun (issue 42: the count replaced `TCP_INFO`).
    @Test func aConnectionWaitingBetweenRequestsHasTheIdleTimeout() throws {
        let quick = try quickServer(idleTimeout: 6)
        defer { quick.stop() }
        let connection = try RawConnection(port: quick.port, timeout: 8)
        // Requests of several sizes, one at a time and two pipelined, each answer read.
        for padding in [0, 200, 1_500] {
            connection.send("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \(String(repeating: "a", count: padding))\r\n\r\n")
            #expect(connection.readResponse()?.status == 200)
        }
        connection.send(request("/ok") + request("/ok"))
        #expect(connection.readResponse()?.status == 200)
        #expect(connection.readResponse()?.status == 200)
        usleep(2_500_000)  // past the head's deadline of 1 s, within the idle timeout
        connection.send(request("/ok"))
        #expect(connection.readResponse()?.status == 200, "the waiting connection was timed out as a head begun")
    }

    /// A whole head past the 8 KiB limit is refused (431) though most of it is spaces before a
    /// field's value, which the parsers drop (h2o answered one of 64 KiB with 200).
    @Test(arguments: [9_000, 16_384, 65_536])
    func aWholeHeadPastTheLimitIsRefused(spaces: Int) throws {
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: 3)
        connection.send("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + String(repeating: " ", count: spaces) + "v\r\n\r\n")
        #expect(connection.readResponse()?.status == 431)
    }
}
