import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP layer against clients that break the rules (raw sockets on 127.0.0.1, each test
/// bounded in time and count): RFC 9112 framing, versions, the head deadline, clients that
/// never read, overload, the Host allow-list and CORS.
@Suite(.serialized) struct HostileClientTests {
    let harness: SyncHarness
    let server: TileServer

    init() throws {
        harness = try SyncHarness()
        try harness.builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf")
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try harness.sync("cities")
        try harness.sync("plain")
        server = try Self.server(harness, idleTimeout: 3)
    }

    /// The suite's server: 200 connections at most, idle ones closed after `idleTimeout` seconds.
    static func server(_ harness: SyncHarness, idleTimeout: Double) throws -> TileServer {
        var settings = HTTPServer.Settings()
        settings.readTimeout = 1
        settings.idleTimeout = idleTimeout
        settings.maxConnections = 200
        settings.hostPolicy = HTTPHostPolicy(boundHost: "127.0.0.1", allowing: ["maps.example"])
        return try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(http: settings, leafletPath: "/nonexistent"),
            makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
    }

    func exchange(_ text: String) throws -> (RawConnection.Response?, RawConnection) {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send(text)
        return (connection.readResponse(), connection)
    }

    @Test(arguments: [
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3, 4\r\n\r\nabcd",
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.2\r\n\r\n",
    ])
    func ambiguousFramingIs400AndCloses(request: String) throws {
        let (response, connection) = try exchange(request)
        let answered = try #require(response, "no answer")
        // libmicrohttpd may refuse some of these itself (400 too); either way the connection closes.
        #expect(answered.status == 400)
        #expect(connection.isClosedByServer())
    }

    /// Raw bytes outside ASCII in the target (found by an attack: read with U+FFFD in their
    /// place and answered, where `%ff` is refused): 400, as RFC 9112 has the target ASCII.
    @Test func rawBytesOutsideASCIIInTheTargetAre400() throws {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send(Data("GET /fonts/".utf8) + Data([0xFF, 0xFE]) + Data("/0-255.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        #expect(try #require(connection.readResponse(), "no answer").status == 400)
    }

    @Test func unknownMinorVersionIs505() throws {
        let (response, _) = try exchange("GET /plain/0/0/0.png HTTP/1.9\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(response?.status == 505)
    }

    /// A version other than HTTP/1.x: 505, with its Date, whatever the library (h2o's parser
    /// reads HTTP/1.x only, and answered 400 without a Date before its glue refused it itself).
    @Test(arguments: ["HTTP/2.0", "HTTP/3.0", "HTTP/0.9"])
    func otherMajorVersionsAre505(version: String) throws {
        let (response, connection) = try exchange("GET /plain/0/0/0.png \(version)\r\nHost: 127.0.0.1\r\n\r\n")
        let answered = try #require(response, "no answer")
        #expect(answered.status == 505)
        #expect(answered.headers["date"]?.hasSuffix(" GMT") == true, "\(answered.headerLines)")
        #expect(connection.isClosedByServer())
    }

    /// The same, its request line sent in pieces, the version's major digit in the first: 505
    /// (picohttpparser refuses ` HTTP/2` before the line is whole; h2o's glue waits for it).
    @Test func aVersionSentInPiecesIs505() throws {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send("GET /plain/0/0/0.png HTTP/2")
        usleep(200_000)
        connection.send(".0\r\nHost: 127.0.0.1\r\n\r\n")
        let answered = try #require(connection.readResponse(), "no answer")
        #expect(answered.status == 505)
        #expect(connection.isClosedByServer())
    }

    /// A head the parser cannot read: 400 with its Date, and the connection closed (h2o's own
    /// 400 had no Date; libmicrohttpd passed the control character on, and the HTTP layer refuses
    /// a field name that is not a token).
    @Test(arguments: [
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
        "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nX\u{1}Y: 1\r\n\r\n",
    ])
    func anUnreadableHeadIs400(request: String) throws {
        let (response, connection) = try exchange(request)
        let answered = try #require(response, "no answer")
        #expect(answered.status == 400)
        #expect(answered.headers["date"]?.hasSuffix(" GMT") == true, "\(answered.headerLines)")
        #expect(connection.isClosedByServer())
    }

    /// A folded header line (obs-fold, RFC 9112 §5.2: a line that starts with a space) is refused
    /// with 400 on h2o, whose parser gives it no name, and the HTTP layer refuses an empty name.
    /// libmicrohttpd 0.9.75 joins it onto the previous field's name before mapgate sees the head
    /// (docs/serving.md): there a folded field is only another field, never read two ways.
    @Test func aFoldedHeaderLineIsRefusedOnH2O() throws {
        let (response, connection) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n b\r\n\r\n")
        let answered = try #require(response, "no answer")
        if HTTPServer.HTTPLibrary.configured == .h2o {
            #expect(answered.status == 400)
            #expect(connection.isClosedByServer())
        } else {
            #expect(answered.status == 200)
        }
    }

    /// Empty lines before a request line are ignored (RFC 9112 §2.2), a first request's and a
    /// kept-alive connection's next one's (h2o's parser skipped one only).
    @Test func emptyLinesBeforeARequestLineAreIgnored() throws {
        let (first, connection) = try exchange("\r\n\r\n\n\r\nGET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(first?.status == 200)
        connection.send("\r\n\r\n\r\nGET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(connection.readResponse()?.status == 200)
    }

    @Test func bareLineFeedsDoNotHang() throws {
        let started = Date()
        let (response, _) = try exchange("GET /plain/0/0/0.png HTTP/1.1\nHost: 127.0.0.1\n\n")
        #expect(Date().timeIntervalSince(started) < 2.5, "waited for a head that was complete")
        if let response { #expect([200, 400].contains(response.status)) }
    }

    @Test func gzipWithQZeroIsNotSent() throws {
        let (refused, _) = try exchange("GET /cities/2/2/1.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip;q=0, identity\r\n\r\n")
        #expect(refused?.status == 200)
        #expect(refused?.headers["content-encoding"] == nil)
        let (starred, _) = try exchange("GET /cities/2/2/1.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: *;q=0.5, gzip;q=0\r\n\r\n")
        #expect(starred?.headers["content-encoding"] == nil)
        let (accepted, _) = try exchange("GET /cities/2/2/1.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: br, gzip;q=0.3\r\n\r\n")
        #expect(accepted?.headers["content-encoding"] == "gzip")
    }

    @Test func weakAndListedEntityTagsGive304() throws {
        let (first, _) = try exchange("GET /plain/1/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let etag = try #require(first?.headers["etag"])
        for match in ["W/\(etag)", "\"nope\", \(etag)", "W/\"x\",W/\(etag)", "*"] {
            let (response, _) = try exchange("GET /plain/1/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: \(match)\r\n\r\n")
            #expect(response?.status == 304, "If-None-Match: \(match)")
        }
        let (other, _) = try exchange("GET /plain/1/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: W/\"nope\"\r\n\r\n")
        #expect(other?.status == 200)
    }

    @Test(arguments: [
        ("127.0.0.1", 200), ("127.8.9.10:80", 200), ("localhost", 200), ("LOCALHOST:8080", 200), ("[::1]:1", 200), ("maps.example", 200),
        ("evil.example", 421), ("127.0.0.1.evil.example", 421), ("localhost.evil.example", 421), ("[::2]", 421), ("", 421),
        // Loopback in other spellings (found by an attack: refused), and a port no URL can hold
        // (answered, and written into the TileJSON's URLs).
        ("localhost.", 200), ("localhost:", 200), ("[0:0:0:0:0:0:0:1]", 200), ("[::ffff:127.0.0.1]:8080", 200), ("[::ffff:10.0.0.1]", 421),
        ("127.0.0.1:99999", 421), ("localhost:65536", 421), ("127.0.0.1:65535", 200),
    ])
    func onlyAllowedHostsAreAnswered(host: String, status: Int) throws {
        let (response, _) = try exchange("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        #expect(response?.status == status, "Host: \(host)")
    }

    @Test func tileJSONUsesTheAllowedHostOfTheRequest() throws {
        let (response, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: localhost:\(server.http.port)\r\n\r\n")
        let body = try #require(response?.body)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["tiles"] as? [String] == ["http://localhost:\(server.http.port)/plain/{z}/{x}/{y}.png"])
    }

    @Test func preflightIsGrantedForMapDataOnly() throws {
        let ask = "Origin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: x-requested-with, if-none-match\r\n"
        let (tile, _) = try exchange("OPTIONS /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\(ask)\r\n")
        #expect(tile?.status == 204)
        #expect(tile?.headers["access-control-allow-origin"] == "*")
        #expect(tile?.headers["access-control-allow-methods"] == "GET, HEAD")
        #expect(tile?.headers["access-control-allow-headers"] == "x-requested-with, if-none-match")
        // Only names go back: empty items are dropped, and nothing but them means no header.
        let odd = "Origin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: ,, x-a ,,\r\n"
        let (listed, _) = try exchange("OPTIONS /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\(odd)\r\n")
        #expect(listed?.headers["access-control-allow-headers"] == "x-a")
        let (commas, _) = try exchange("OPTIONS /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\(odd.replacingOccurrences(of: " x-a ", with: ""))\r\n")
        #expect(commas?.status == 204)
        #expect(commas?.headers["access-control-allow-headers"] == nil)
        for path in ["/", "/health", "/metrics", "/view/plain"] {
            let (preflight, _) = try exchange("OPTIONS \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(ask)\r\n")
            #expect(preflight?.status == 204)
            #expect(preflight?.headers["access-control-allow-origin"] == nil, "\(path)")
            let (get, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://app.example\r\n\r\n")
            #expect(get?.headers["access-control-allow-origin"] == nil, "\(path)")
        }
    }

    @Test func healthAndMetrics() throws {
        let (health, _) = try exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(health?.status == 200)
        let healthBody = try #require(health?.body)
        let object = try #require(try JSONSerialization.jsonObject(with: healthBody) as? [String: Any])
        #expect(object["gate"] as? String == "open")
        #expect(object["regions"] as? Int == 2)
        _ = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = try exchange("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        // An answer is counted once the library says it is written out, which may come a moment
        // after the client has it (h2o's loop reports the write on its next turn).
        var metrics: RawConnection.Response?
        var text = ""
        let deadline = Date().addingTimeInterval(3)
        repeat {
            metrics = try exchange("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").0
            text = String(decoding: try #require(metrics?.body), as: UTF8.self)
            if text.contains("mapgate_http_requests_total{route=\"tile\",status=\"200\"}") && text.contains("status=\"421\"} 1") { break }
            usleep(50_000)
        } while Date() < deadline
        #expect(metrics?.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(text.contains("mapgate_http_requests_total{route=\"tile\",status=\"200\"}"))
        #expect(text.contains("mapgate_http_requests_total{route=\"index\",status=\"421\"} 1"))
        #expect(text.contains("mapgate_http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        #expect(text.contains("mapgate_http_open_connections "))
        #expect(text.contains("mapgate_gate_state{state=\"open\"} 1"))
    }

    /// 1 byte every 0.2 s kept the old server's connection for ever: the head has 1 s in all.
    @Test func tricklingClientGets408AtItsDeadline() throws {
        let connection = try RawConnection(port: server.http.port, timeout: 5)
        let started = Date()
        var sent = 0
        let request = Array("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
        while Date().timeIntervalSince(started) < 4, sent < 40 {
            connection.send(String(decoding: [request[min(sent, request.count - 1)]], as: UTF8.self))
            sent += 1
            Thread.sleep(forTimeInterval: 0.2)
            if connection.hasBytesWaiting() { break }
        }
        let response = connection.readResponse()
        #expect(response?.status == 408)
        // With the Date every answer carries (RFC 9110 §6.6.1; found by an attack: this one had none).
        #expect(response.flatMap { $0.headers["date"] ?? $0.headers["Date"] }.map { $0.hasSuffix(" GMT") } == true, "\(String(describing: response?.headers))")
        #expect(Date().timeIntervalSince(started) < 2.8, "closed after \(Date().timeIntervalSince(started)) s")
    }

    /// Clients that send requests and never read must not stall anyone else.
    @Test func clientsThatNeverReadDoNotStallOthers() throws {
        var stuck: [RawConnection] = []
        let requests = String(repeating: "GET /cities/2/2/1.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 400)
        for _ in 0..<20 {
            let connection = try RawConnection(port: server.http.port, timeout: 1)
            connection.shrinkReceiveBuffer()
            connection.send(requests)
            stuck.append(connection)
        }
        #expect(waitUntil { server.http.openConnections >= stuck.count })
        let client = HTTPClient()
        for _ in 0..<20 {
            let started = Date()
            let response = try client.get(HTTPRequest(url: server.baseURL + "/plain/0/0/0.png"))
            #expect(response.status == 200)
            // A stall would last until the stuck clients' deadlines (the idle timeout, 3 s here);
            // a loaded machine takes up to a second for an answer (0.71 s once in CI, 6 suites at a time).
            #expect(Date().timeIntervalSince(started) < 2, "answered after \(Date().timeIntervalSince(started)) s")
        }
        // Each is closed by its own deadline: no progress for the idle timeout (3 s here). The
        // client sees the FIN only behind the answers it never read: count on the server's side.
        #expect(server.http.openConnections >= stuck.count)
        #expect(waitUntil(timeout: 15) { server.http.openConnections <= 1 }, "\(server.http.openConnections) connections still open")
    }

    /// A client that stops reading its answers is closed about one idle period (3 s here) after
    /// the last byte moved, end to end on either library. (The attack's case on h2o, a single
    /// answer that never completes, is `HTTPConnectionRegistryTests.aStillConnectionIsClosedOnePeriodAfterItsLastByte`:
    /// here answers complete before the client's buffer fills, which set the watchdog's mark.)
    @Test func aClientThatStopsReadingIsClosedOneIdlePeriodAfterItsLastByte() throws {
        let connection = try RawConnection(port: server.http.port, timeout: 1)
        connection.shrinkReceiveBuffer()
        let started = Date()
        connection.send(String(repeating: "GET /cities/2/2/1.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 400))
        #expect(waitUntil(timeout: 15) { server.http.openConnections == 0 })
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 5.5, "closed after \(seconds) s, with an idle timeout of 3 s")
        withExtendedLifetime(connection) {}
    }

    /// A request hidden in the body of one whose `Content-Length` is a list (`31, 31`) is never
    /// answered (found by an attack on h2o: the list was read as no length, so no body; the
    /// hidden tile request was answered and could spend the gate's use).
    @Test func aRequestHiddenInTheBodyOfAListedLengthIsNeverAnswered() throws {
        let hidden = "GET /plain/0/0/0.png?hidden HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(hidden.utf8.count), \(hidden.utf8.count)\r\n\r\n\(hidden)")
        let first = connection.readResponse()
        // libmicrohttpd refuses the list itself (400); the HTTP layer refuses the body (413).
        #expect(first?.status == 400 || first?.status == 413)
        #expect(connection.readResponse() == nil, "the hidden request was answered")
        #expect(connection.isClosedOrResetByServer())
    }

    @Test func pastMaxConnectionsClientsGet503WithRetryAfter() throws {
        var held: [RawConnection] = []
        for _ in 0..<200 { held.append(try RawConnection(port: server.http.port, timeout: 3)) }
        #expect(waitUntil { server.http.openConnections >= held.count })
        let (response, connection) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(response?.status == 503)
        #expect(response?.headers["retry-after"] == "1")
        #expect(connection.isClosedByServer())
        held.removeAll()
        #expect(waitUntil { server.http.openConnections < 200 })
        #expect(try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").0?.status == 200)
    }

    /// Issue 40 item 12: clients that connect and then sit idle cannot keep everyone out. Past
    /// the limit, the connection idle the longest (half the idle timeout or more) is closed for
    /// the new client; `/health` is answered on a connection past the limit.
    @Test func idleClientsMakeRoomAndHealthIsAnswered() throws {
        var idle: [RawConnection] = []
        for _ in 0..<200 { idle.append(try RawConnection(port: server.http.port, timeout: 3)) }
        #expect(waitUntil { server.http.openConnections >= idle.count })
        // At once, none has been idle long enough: a new client gets 503, /health 200.
        #expect(try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").0?.status == 503)
        #expect(try exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").0?.status == 200)
        // After half the idle timeout (1.5 s of 3), the idlest goes and the new client is served.
        Thread.sleep(forTimeInterval: 2)
        let (response, _) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(response?.status == 200)
        #expect(idle.contains { $0.isClosedByServer() }, "an idle connection was closed to make room")
    }

    /// Bad input, round two, item 6: past the limit, 601 of 855 requests of clients admitted
    /// earlier and kept alive were refused. The limit refuses new connections only.
    @Test func keptAliveClientsAreStillServedPastMaxConnections() throws {
        // Idle connections kept far longer than the suite's 3 s: under CI's load the 200 first
        // requests took longer than that, and the first ones were closed as idle before the test
        // asked again (all 200 "refused", 0 open).
        server.stop()
        let server = try Self.server(harness, idleTimeout: 60)
        defer { server.stop() }
        var admitted: [RawConnection] = []
        for _ in 0..<200 {
            let connection = try RawConnection(port: server.http.port, timeout: 3)
            connection.send("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try #require(connection.readResponse()?.status == 200)
            admitted.append(connection)
        }
        var late: [RawConnection] = []
        for _ in 0..<5 { late.append(try RawConnection(port: server.http.port, timeout: 3)) }
        // The late ones are in, past the limit, before the admitted clients ask again.
        #expect(waitUntil { server.http.openConnections >= admitted.count + late.count }, "\(server.http.openConnections) open")
        var failed = 0
        for connection in admitted {
            connection.send("GET /plain/1/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            if connection.readResponse()?.status != 200 { failed += 1 }
        }
        #expect(failed == 0, "\(failed) of 200 admitted, kept-alive clients were refused")
        for connection in late {
            connection.send("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(connection.readResponse()?.status == 503)
        }
    }

    /// RFC 9110 §8.6: a 304 carries at most one Content-Length, the representation's. Two (the
    /// handler's and libmicrohttpd's 0) made Chromium refuse every revalidated tile
    /// (ERR_RESPONSE_HEADERS_MULTIPLE_CONTENT_LENGTH), so a reload blanked the map.
    @Test(arguments: ["/plain/1/0/0.png", "/cities/2/2/1.pbf"])
    func notModifiedCarriesOneContentLength(path: String) throws {
        let (first, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n")
        let etag = try #require(first?.headers["etag"])
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\nIf-None-Match: \(etag)\r\n\r\n"
        let (response, connection) = try exchange(request)
        #expect(response?.status == 304, "\(response?.headerLines ?? [])")
        #expect(response?.values(of: "content-length") == [String(first?.body.count ?? -1)], "\(response?.headerLines ?? [])")
        #expect(response?.headers["transfer-encoding"] == nil)
        // The connection stays usable: no body was expected or sent.
        connection.send("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(connection.readResponse()?.status == 200)
    }

    /// A request line too long for the head buffer is 414 (URI Too Long, RFC 9110 §15.5.15);
    /// header fields too large are 431 (RFC 6585 §5). Both from libmicrohttpd.
    /// A target up to about 7.9 KB is answered (issue 26 item 10: docs/serving.md said heads
    /// over about 3.8 KB got 414, while a 7,900-byte target was answered 404).
    @Test func longTargetIs414AndLargeHeadersAre431() throws {
        let (answered, _) = try exchange("GET /plain/0/0/0.png?\(String(repeating: "q", count: 6_000)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(answered?.status == 200)
        // Refused by the HTTP layer before it leaves too little room for the answer (below).
        let (refused, _) = try exchange("GET /plain/0/0/0.png?\(String(repeating: "q", count: 7_000)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(refused?.status == 414)
        let path = "/" + String(repeating: "a", count: 20_000)
        let (long, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(long?.status == 414)
        let (large, _) = try exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n")
        #expect(large?.status == 431)
    }

    /// A head that never ends is not read on and on: h2o would hold up to 417,792 bytes of it per
    /// connection (thousands of such clients: gigabytes), libmicrohttpd holds its 8 KiB pool. Past
    /// 8 KiB at most the client gets 431 (414 for a request line that long) and the connection closes.
    @Test(arguments: [431, 414])
    func aHeadThatNeverEndsIsRefusedEarly(status: Int) throws {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        let head =
            status == 414
            ? "GET /" + String(repeating: "a", count: 200_000)
            : "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + String(repeating: "X-Pad: \(String(repeating: "p", count: 4_000))\r\n", count: 50)
        connection.send(head)
        let response = connection.readResponse()
        #expect(response?.status == status)
        #expect(connection.isClosedOrResetByServer())
    }

    /// The same behind a request answered first, in the same packet (found by an attack on h2o:
    /// the pipelined head was held silently until the idle timeout).
    @Test func aPipelinedHeadThatNeverEndsIsRefusedEarly() throws {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send(
            "GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + String(repeating: "X-Pad: \(String(repeating: "p", count: 4_000))\r\n", count: 5))
        #expect(connection.readResponse()?.status == 200)
        #expect(connection.readResponse()?.status == 431)
        #expect(connection.isClosedOrResetByServer())
    }

    /// The head buffer is 8 KiB per connection (each idle keep-alive connection holds all of
    /// it; libmicrohttpd reads a head into about half): a 3 KB head is answered, also with the
    /// longest answer headers (an HTML page's CSP); an 8 KB one is refused.
    @Test func headsOfThreeKilobytesAreAnswered() throws {
        let padding = String(repeating: "c", count: 3_000)
        let (tile, _) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(padding)\r\n\r\n")
        #expect(tile?.status == 200)
        let (page, _) = try exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(padding)\r\n\r\n")
        #expect(page?.status == 200)
        #expect(page?.headers["content-security-policy"] != nil)
        // Past it libmicrohttpd answers 431, or (a head that fits the buffer but leaves no room
        // for the answer) closes the connection without one; never 200.
        let (large, connection) = try exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(String(repeating: "c", count: 8_000))\r\n\r\n")
        #expect(large == nil || large?.status == 431)
        #expect(connection.isClosedByServer())
    }

    /// A head that fits libmicrohttpd's buffer but leaves too little of it for the answer got
    /// no answer at all (the connection closed) after the handler had run: a tile's handler had
    /// then delivered the server's use of the gate for nothing (found by an attack). Every size
    /// of head, by its fields or its target, now gets its answer or a refusal with a status
    /// (past about 3.9 KB of fields libmicrohttpd itself closes without one, before any handler).
    @Test(arguments: ["/plain/0/0/0.png", "/", "/plain.json", "/nope"])
    func everyHeadGetsAnAnswerOrARefusal(_ path: String) throws {
        for size in stride(from: 3_000, through: 3_840, by: 8) {
            let (answer, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: \(String(repeating: "c", count: size))\r\n\r\n")
            #expect(answer?.status == 200 || answer?.status == 404 || answer?.status == 431, "\(path) with a Cookie of \(size) bytes: \(answer?.status ?? 0)")
        }
        for size in stride(from: 6_000, through: 7_600, by: 16) {
            let (answer, _) = try exchange("GET \(path)?\(String(repeating: "q", count: size)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(answer?.status == 200 || answer?.status == 404 || answer?.status == 414, "\(path) with a target of \(size) bytes: \(answer?.status ?? 0)")
        }
        var many = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for index in 0..<96 { many += "X-H\(index): v\r\n" }
        let (answer, _) = try exchange(many + "\r\n")
        #expect(answer?.status == 431, "\(path) with 96 fields: \(answer?.status ?? 0)")
    }

    /// RFC 9112 §5.1: whitespace between a field name and its colon MUST be refused (400):
    /// `Content-Length : 34` slipped past the framing checks as another field, and its "body"
    /// was read as a second request. A request with a body (none is taken) is refused at once,
    /// not read a byte at a time for ever.
    @Test(arguments: [
        "GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length : 34\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n",
    ])
    func whitespaceBeforeAColonIsRefused(_ request: String) throws {
        let (answer, connection) = try exchange(request)
        #expect(answer?.status == 400)
        #expect(connection.isClosedByServer())
    }

    /// libmicrohttpd 0.9.75 sends its own error answers' head twice (a client reads the second as
    /// the body): a missing Host is refused by the HTTP layer instead, once, and so is a target
    /// with a space.
    @Test(arguments: [
        ("GET /plain.json HTTP/1.1\r\n\r\n", 400), ("GET /a b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
    ])
    func refusalsHaveOneHead(_ request: String, _ status: Int) throws {
        let connection = try RawConnection(port: server.http.port, timeout: 3)
        connection.send(request)
        let bytes = connection.readAll()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(text)")
        #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "\(text)")
    }

    /// A 400 says what in the target is at fault and why (found by an attack: "bad path" and
    /// "malformed request target" named neither).
    @Test(arguments: [
        ("/plain/0/0/%zz.png", "malformed request target: %zz is not a percent-encoded byte (% and two hexadecimal digits)"),
        ("/plain/0/0/%ff.png", "malformed request target: its path does not decode to UTF-8 text"),
        ("/plain/../plain/0/0/0.png", "bad path /plain/../plain/0/0/0.png: it has a . or .. segment"),
        ("/plain//0/0/0.png", "bad path /plain//0/0/0.png: it has an empty segment (//)"),
        ("/plain/0/0/0%5C.png", "bad path /plain/0/0/0\\.png: a backslash is not a path separator here"),
    ])
    func aBadTargetIsRefusedSayingWhy(_ path: String, _ said: String) throws {
        let (answer, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(answer?.status == 400)
        #expect(String(decoding: answer?.body ?? Data(), as: UTF8.self) == said + "\n")
    }

    /// An escaped slash or NUL in the path is refused before any route (found by an attack:
    /// `%2F` was decoded before the path was split, so `/plain/0/0%2F0.png` was a second address of
    /// a tile, and `/fonts/a%2Fb/…` a tile of a region "fonts"); an escape in a query is the query's.
    @Test(arguments: ["/plain/0/0%2F0.png", "/plain/0/0%2f0.png", "/plain%2F0/0/0.png", "/plain/0/0/0%00.png", "/fonts/a%2Fb/0-255.pbf"])
    func anEscapedSlashOrNULIsRefused(_ path: String) throws {
        let (answer, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(answer?.status == 400)
        let text = String(decoding: answer?.body ?? Data(), as: UTF8.self)
        // Saying which escape, and why (found by an attack: the body named neither).
        let escape = path.contains("%00") ? "%00 is an escaped NUL" : path.contains("%2f") ? "%2f is an escaped /" : "%2F is an escaped /"
        #expect(text == "malformed request target: \(escape), which no path here holds\n", "\(text)")
        let (plain, _) = try exchange("GET /plain/0/0/0.png?a=%2F HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(plain?.status == 200)
    }

    /// A font stack holding a slash is no route (it was read as a tile of a region "fonts").
    @Test(arguments: ["/fonts/a/b/0-255.pbf", "/styles/a/b/style.json"])
    func aSlashInAFontStackIsNoRegion(_ path: String) throws {
        let (answer, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(answer?.status == 404)
        let text = String(decoding: answer?.body ?? Data(), as: UTF8.self)
        #expect(text.hasPrefix("not found: "), "\(text)")
    }

    @Test func aRequestWithABodyIsRefusedWithoutReadingIt() throws {
        let (answer, connection) = try exchange("GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nx")
        #expect(answer?.status == 413)
        #expect(connection.isClosedByServer())
        let (empty, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        #expect(empty?.status == 200)
    }

    /// `Expect: 100-continue` with a byte after the head in one packet (found by an attack:
    /// libmicrohttpd sent its 100, took the byte for a body and closed without the 200, after the
    /// tile's route had delivered the gate's use): 417 before any route, in any spelling.
    @Test(arguments: ["Expect: 100-continue", "EXPECT: 100-CONTINUE", "Expect: 100-continue\r\nContent-Length: 0"])
    func anExpectationIsRefusedBeforeAnyRoute(_ field: String) throws {
        let (answer, connection) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\(field)\r\n\r\nX")
        // The refusal, not a 100 (which would come before any route's answer).
        #expect(answer?.status == 417, "\(String(describing: answer))")
        #expect(connection.isClosedByServer())
    }

    /// `If-Match` (found by an attack: ignored, a 200 sent whatever it named): 412 when it names
    /// none of the tile's tags, the tile when it names it or `*`. A coordinate with a leading zero
    /// (found by an attack: `/plain/00/0/0.png` was `/plain/0/0/0.png`) is no tile's address.
    @Test func ifMatchAndLeadingZeros() throws {
        let (tile, _) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let etag = try #require(tile?.headers["etag"])
        for (condition, status) in [("\"nope\"", 412), ("W/\(etag)", 412), (etag, 200), ("\"nope\", \(etag)", 200), ("*", 200)] {
            let (answer, _) = try exchange("GET /plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-Match: \(condition)\r\n\r\n")
            #expect(answer?.status == status, "If-Match: \(condition)")
        }
        for path in ["/plain/00/0/0.png", "/plain/0/00/0.png", "/plain/0/0/00.png", "/plain/1/01/0.png"] {
            let (answer, _) = try exchange("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(answer?.status == 400, "\(path)")
        }
    }

    /// Whitespace after a field's value is not part of it (RFC 9110 §5.5; found by an attack: a
    /// Host with a trailing space was refused as another host).
    @Test func trailingWhitespaceIsNotPartOfAValue() throws {
        let (answer, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1:\(server.http.port)  \t\r\n\r\n")
        #expect(answer?.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: answer?.body ?? Data()) as? [String: Any])
        #expect(json["tiles"] as? [String] == ["http://127.0.0.1:\(server.http.port)/plain/{z}/{x}/{y}.png"])
    }

    /// A list field on two lines is one list (RFC 9110 §5.3; found by an attack: only the first
    /// line counted): the tag on the second `If-None-Match` line gives 304, on the second
    /// `If-Match` line 200, and gzip on the second `Accept-Encoding` line is taken.
    @Test func aListFieldOnTwoLinesIsOneList() throws {
        let (first, _) = try exchange("GET /cities/0/0/0.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n")
        let etag = try #require(first?.headers["etag"], "\(String(describing: first?.headers))")
        let (notModified, _) = try exchange(
            "GET /cities/0/0/0.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\nIf-None-Match: \"other\"\r\nIf-None-Match: \(etag)\r\n\r\n")
        #expect(notModified?.status == 304)
        let (matched, _) = try exchange(
            "GET /cities/0/0/0.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\nIf-Match: \"other\"\r\nIf-Match: \(etag)\r\n\r\n")
        #expect(matched?.status == 200)
        let (gzipped, _) = try exchange("GET /cities/0/0/0.pbf HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: br\r\nAccept-Encoding: gzip\r\n\r\n")
        #expect(gzipped?.headers["content-encoding"] == "gzip", "\(String(describing: gzipped?.headers))")
    }

    /// The region list as JSON or a page, by `Accept` read as RFC 9110 has it: qualities (0 is
    /// "not this"), media types without regard to case, and `Vary: Accept` on both (found by an
    /// attack: `application/json;q=0, text/html` got JSON, `APPLICATION/JSON` the page).
    @Test(arguments: [
        ("application/json", true), ("APPLICATION/JSON", true), ("application/json;q=0, text/html", false), ("text/html, application/json;q=0.5", false),
        ("text/html;q=0.5, application/json", true), ("*/*", false),
        // The most specific range that matches each type gives its quality (found by the next
        // attack: `application/*` got the page, `application/json;q=0.9, */*;q=1` JSON).
        ("application/*", true), ("application/json;q=0.9, */*;q=1", false), ("application/json;q=0.5, text/*", false),
        ("application/json, */*", true), ("*/*;q=0.5, application/json;q=0.4", false), ("*/*;q=0.5, application/json;q=0.5", true), ("text/*;q=0.3, */*", true),
        ("application/json;q=2", false), ("application/json;q=nan", false), ("application/json;q=0x1p-1, text/html;q=0.1", false),
        ("application/json;q=0.5e0, text/html;q=0.1", false), ("application/json;q=1.000, text/html;q=0.999", true),
    ])
    func theListIsJSONWhenAcceptPrefersIt(accept: String, isJSON: Bool) throws {
        let (answer, _) = try exchange("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: \(accept)\r\n\r\n")
        #expect(answer?.status == 200)
        #expect(answer?.headers["content-type"]?.hasPrefix(isJSON ? "application/json" : "text/html") == true, "\(accept): \(String(describing: answer?.headers))")
        #expect(answer?.headers["vary"]?.contains("Accept") == true, "\(String(describing: answer?.headers))")
    }

    /// HTTP/1.0 has no Host; a client on loopback reaching the server on loopback is answered.
    @Test func http10WithoutHostOnLoopbackIsAnswered() throws {
        let (response, _) = try exchange("GET /plain/0/0/0.png HTTP/1.0\r\n\r\n")
        #expect(response?.status == 200)
    }

    /// RFC 9112 §3.2.2: absolute-form targets are accepted, their authority taking the place of
    /// `Host` (also for the allow-list).
    /// Found by an attack: with every place libmicrohttpd has taken (admitted and refused
    /// connections, silent), a new connection waited in the kernel's backlog until an idle one
    /// timed out (30 s by default), `/health` too. It is answered at once now: admitted in the
    /// place of one idle long enough, or told 503.
    @Test func pastEveryPlaceANewConnectionIsAnsweredAtOnce() throws {
        var settings = HTTPServer.Settings()
        settings.idleTimeout = 30
        settings.maxConnections = 4
        settings.reserveConnections = 2
        settings.evictableAfter = 0.5
        let small = try TileServer(
            library: harness.library, authorization: try harness.authorization(), configuration: .init(http: settings, leafletPath: "/nonexistent"),
            makeGate: { try Gate(store: try harness.gateStore(), settings: .unreachable) })
        defer { small.stop() }
        let silent = try (0..<6).map { _ in try RawConnection(port: small.http.port, timeout: 3) }
        Thread.sleep(forTimeInterval: 1)  // the admitted ones idle long enough to make room
        let started = Date()
        let health = try RawConnection(port: small.http.port, timeout: 5)
        health.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let answer = try #require(health.readResponse(), "no answer within 5 s")
        #expect(answer.status == 200 || answer.status == 503, "\(answer.status)")
        #expect(Date().timeIntervalSince(started) < 3)
        withExtendedLifetime(silent) {}
    }

    @Test func absoluteFormTargetsAreAcceptedWithTheirAuthorityAsHost() throws {
        let port = server.http.port
        let (tile, _) = try exchange("GET http://127.0.0.1:\(port)/plain/0/0/0.png HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(tile?.status == 200)
        let (tileJSON, _) = try exchange("GET http://localhost:\(port)/plain.json HTTP/1.1\r\nHost: other.invalid\r\n\r\n")
        #expect(tileJSON?.status == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: tileJSON?.body ?? Data()) as? [String: Any])
        #expect(json["tiles"] as? [String] == ["http://localhost:\(port)/plain/{z}/{x}/{y}.png"])
        let (evil, _) = try exchange("GET http://evil.example/plain.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(evil?.status == 421)
    }

    /// The URLs TileJSON hands out carry the Host's port as a number (found by an attack: `:080`
    /// was written as it came, and `:0`, which names no port, was answered).
    @Test func tileJSONWritesTheHostsPortAsANumber() throws {
        let port = server.http.port
        let (zeros, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1:0\(port)\r\n\r\n")
        let json = try #require(try JSONSerialization.jsonObject(with: zeros?.body ?? Data()) as? [String: Any])
        #expect(json["tiles"] as? [String] == ["http://127.0.0.1:\(port)/plain/{z}/{x}/{y}.png"])
        let (empty, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: localhost:\r\n\r\n")
        let emptyJSON = try #require(try JSONSerialization.jsonObject(with: empty?.body ?? Data()) as? [String: Any])
        #expect(emptyJSON["tiles"] as? [String] == ["http://localhost/plain/{z}/{x}/{y}.png"])
        let (none, _) = try exchange("GET /plain.json HTTP/1.1\r\nHost: 127.0.0.1:0\r\n\r\n")
        #expect(none?.status == 421 || none?.status == 400, "\(String(describing: none?.status))")
    }
}

/// Pure parts of the policy, as tables.
@Suite struct HTTPPolicyTableTests {
    @Test(arguments: [
        ("gzip", true), ("gzip;q=0", false), ("GZIP; q=0.001", true), ("*", true), ("*;q=0", false), ("identity", false),
        ("*, gzip;q=0", false), ("gzip;q=0, *", false), ("deflate, gzip ;q=1.0", true), ("", false),
    ])
    func acceptEncoding(header: String, accepts: Bool) {
        #expect(TileRequestHandler.acceptsGzip(header) == accepts, "\(header)")
    }

    @Test(arguments: [
        ("localhost:8080", "localhost"), ("[::1]:80", "::1"), ("Example.COM", "example.com"), ("a:b:c", nil), ("x:99999999", nil),
        ("user@host", nil), ("", nil), ("[::1", nil), ("x:65536", nil), ("x:", "x"), ("[::1]:", "::1"),
        // Port 0 names no port a client reached (found by an attack: it was written into TileJSON).
        ("x:0", nil), ("x:00000", nil), ("[::1]:0", nil), ("x:080", "x"),
    ])
    func hostNames(value: String, name: String?) {
        #expect(HTTPHostPolicy.hostName(value) == name)
    }

    /// What URLs written for the client carry: the port without leading zeros.
    @Test(arguments: [
        ("127.0.0.1:080", "127.0.0.1:80"), ("localhost:08080", "localhost:8080"), ("[::1]:0443", "[::1]:443"), ("[::1]", "[::1]"),
        ("maps.example", "maps.example"), ("127.0.0.1:8080", "127.0.0.1:8080"),
        // An empty port is the default one, written without its colon (`http://localhost:/…` was written).
        ("localhost:", "localhost"), ("[::1]:", "[::1]"), ("127.0.0.1:", "127.0.0.1"),
    ])
    func hostsAsURLsCarryThem(value: String, canonical: String) {
        #expect(HTTPHostPolicy.canonical(value) == canonical)
    }

    /// The fast path for loopback hosts agrees: port 0 is refused there too.
    @Test func portZeroIsNoLoopbackHost() {
        let policy = HTTPHostPolicy(boundHost: "127.0.0.1")
        #expect(!policy.allows("127.0.0.1:0") && !policy.allows("localhost:0") && !policy.allows("[::1]:0"))
        #expect(policy.allows("127.0.0.1:1") && policy.allows("localhost:65535") && policy.allows("127.0.0.1:080"))
    }
}
