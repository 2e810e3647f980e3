import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The libcurl client against a real HTTP server on 127.0.0.1 (the test origin).
@Suite struct HTTPClientTests {
    let root: TemporaryDirectory
    let origin: TestOrigin
    let client = HTTPClient()
    let payload: Data

    init() throws {
        root = try TemporaryDirectory()
        payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
        try payload.write(to: URL(fileURLWithPath: root.file("blob.bin")))
        try root.write("hello.txt", "hello, map\n")
        origin = try TestOrigin(root: root.path)
    }

    func url(_ path: String) -> String { origin.baseURL + path }

    @Test func getReturnsBodyStatusAndHeaders() throws {
        let response = try client.get(HTTPRequest(url: url("/hello.txt")))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, map\n")
        #expect(response.header("content-length") == "11")
        #expect(response.header("ETag")?.hasPrefix("\"") == true)
        #expect(origin.requests.last?.userAgent == "mapgate/\(BuildInfo.version)")
    }

    @Test func missingFileIs404NotAnError() throws {
        let response = try client.get(HTTPRequest(url: url("/nope.txt")))
        #expect(response.status == 404)
    }

    @Test func redirectIsFollowed() throws {
        let response = try client.get(HTTPRequest(url: url("/_fault/redirect/hello.txt")))
        #expect(response.status == 200)
        #expect(response.head.effectiveURL == url("/hello.txt"))
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, map\n")
    }

    @Test func redirectLimitIsEnforced() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: url("/_fault/redirect/hello.txt"), maxRedirects: 0))
        }
        guard case .transport(let code, _, let failedURL) = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(code == 47)  // CURLE_TOO_MANY_REDIRECTS
        #expect(failedURL.contains("/_fault/redirect/"))
    }

    @Test func rangeRequestResumesWithPartialContent() throws {
        let first = try client.get(HTTPRequest(url: url("/blob.bin")))
        let etag = try #require(first.header("ETag"))
        let response = try client.get(
            HTTPRequest(url: url("/blob.bin"), headers: [("Range", "bytes=150000-"), ("If-Range", etag)]))
        #expect(response.status == 206)
        #expect(response.header("Content-Range") == "bytes 150000-199999/200000")
        #expect(response.body == payload[150_000...])
        #expect(origin.requests.last?.range == "bytes=150000-")
    }

    @Test func ifRangeMismatchSendsTheWholeFile() throws {
        let response = try client.get(
            HTTPRequest(url: url("/blob.bin"), headers: [("Range", "bytes=100-"), ("If-Range", "\"stale\"")]))
        #expect(response.status == 200)
        #expect(response.body == payload)
    }

    @Test func unsatisfiableRangeIs416() throws {
        let response = try client.get(HTTPRequest(url: url("/blob.bin"), headers: [("Range", "bytes=999999-")]))
        #expect(response.status == 416)
    }

    @Test func ifNoneMatchGives304() throws {
        let etag = try #require(try client.get(HTTPRequest(url: url("/hello.txt"))).header("ETag"))
        let response = try client.get(HTTPRequest(url: url("/hello.txt"), headers: [("If-None-Match", etag)]))
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
    }

    @Test func streamDeliversHeadBeforeBodyInChunks() throws {
        var chunks = 0
        var received = Data()
        var status = 0
        try client.stream(
            HTTPRequest(url: url("/blob.bin")),
            onHead: { head in
                #expect(received.isEmpty)
                status = head.status
            },
            onBody: { chunk in
                chunks += 1
                received.append(contentsOf: chunk)
            })
        #expect(status == 200)
        #expect(received == payload)
        #expect(chunks > 1)
    }

    @Test func stalledTransferHitsTheLowSpeedTimeout() throws {
        let started = Date()
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: url("/_fault/cut=1000,stall=10/blob.bin"), lowSpeedLimit: 100, lowSpeedTime: 1))
        }
        #expect(Date().timeIntervalSince(started) < 9.5)  // the origin stalls for 10 s
        guard case .transport(let code, let message, _) = error else { Issue.record("wrong error"); return }
        #expect(code == 28)  // CURLE_OPERATION_TIMEDOUT
        #expect(message.contains("timed out"))
    }

    /// The connection libcurl opens is close-on-exec, as every descriptor mapgate opens: a child
    /// started during a transfer (the browser "update now" starts) kept it before.
    @Test func theConnectionIsCloseOnExec() throws {
        let done = DispatchSemaphore(value: 0)
        let client = client
        let target = url("/_fault/cut=1000,stall=3/blob.bin")
        DispatchQueue.global().async {
            _ = try? client.get(HTTPRequest(url: target, lowSpeedLimit: 100, lowSpeedTime: 10))
            done.signal()
        }
        defer { done.wait() }
        // The client's end of the stalled connection: its peer is the origin.
        var flags: [Int32] = []
        let deadline = Date().addingTimeInterval(10)
        while flags.isEmpty, Date() < deadline {
            usleep(50_000)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
                guard let fd = Int32(name) else { continue }
                var address = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) } }
                guard named == 0, address.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: address.sin_port) == origin.port else { continue }
                flags.append(fcntl(fd, F_GETFD))
            }
        }
        #expect(!flags.isEmpty, "no connection to the origin was seen")
        #expect(flags.allSatisfy { $0 >= 0 && $0 & FD_CLOEXEC != 0 }, "\(flags)")
    }

    @Test func cutBodyIsAnError() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: url("/_fault/cut=5000/blob.bin")))
        }
        guard case .transport(let code, _, let failedURL) = error else { Issue.record("wrong error"); return }
        #expect(code == 18)  // CURLE_PARTIAL_FILE
        #expect(failedURL.hasSuffix("/blob.bin"))
    }

    @Test func droppedConnectionIsAnError() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: url("/_fault/drop/hello.txt")))
        }
        #expect(error?.isTransient == true)
    }

    @Test func faultStatusIsReturned() throws {
        let response = try client.get(HTTPRequest(url: url("/_fault/status=503/hello.txt")))
        #expect(response.status == 503)
    }

    @Test func httpsToAPlainHTTPPortFailsWithATLSError() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: "https://127.0.0.1:\(origin.port)/hello.txt", connectTimeout: 5, totalTimeout: 10))
        }
        #expect(error?.localizedDescription.contains("TLS error") == true, "\(String(describing: error))")
        #expect(error?.localizedDescription.contains("https://127.0.0.1:\(origin.port)/hello.txt") == true)
    }

    /// A request over https that carries the machine's credentials is not led to plain http by a
    /// redirect (found by an attack: libcurl would send the `Authorization` header in the clear
    /// on the same host); one without them still may be.
    @Test func credentialsAreNeverLedFromHTTPSToHTTP() throws {
        let tls = try TemporaryDirectory()
        let made = try runProcess(
            "/usr/bin/openssl",
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", tls.file("key.pem"), "-out", tls.file("cert.pem")])
        try #require(made.status == 0, "\(made.stderr)")
        let script = try tls.write("serve.py", """
            import http.server, ssl, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response_only(302)
                    self.send_header('Location', sys.argv[2] + '/hello.txt')
                    self.send_header('Content-Length', '0')
                    self.end_headers()
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1] + '/cert.pem', sys.argv[1] + '/key.pem')
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """)
        let server = try BackgroundProcess("/usr/bin/python3", [script, tls.path, origin.baseURL])
        defer { server.stop() }
        let port = try #require(server.firstLine().flatMap(Int.init), "\(server.stderr)")
        var plain = HTTPClient(caFile: tls.file("cert.pem"))
        #expect(try plain.get(HTTPRequest(url: "https://127.0.0.1:\(port)/catalog.json")).status == 200, "no credentials: the redirect is followed")
        plain.credentials = HTTPClient.HostCredentials(host: "127.0.0.1", authorization: "Bearer machine-7")
        origin.clearRequests()
        let error = #expect(throws: HTTPError.self) { try plain.get(HTTPRequest(url: "https://127.0.0.1:\(port)/catalog.json")) }
        #expect(!origin.requests.contains { $0.authorization != nil }, "the credentials went over plain http")
        #expect(error?.reason.contains("from https to plain http (\(origin.baseURL)/hello.txt), which mapgate does not follow") == true, "\(String(describing: error))")
    }

    /// A local file read short of the size it has (libcurl takes a failed read for the file's
    /// end; found by an attack: a stick's read error on catalog.json was "the file changed after
    /// signing", 65) is a read error, I/O (74). A sysfs file stands in for the failing stick: it
    /// says 4096 bytes and reads fewer, and nothing here writes to it.
    @Test func aLocalFileReadShortOfItsSizeIsAReadError() throws {
        let candidates = ["/sys/devices/system/cpu/online", "/sys/kernel/mm/transparent_hugepage/enabled"]
        let path = try #require(candidates.first { path in
            guard let size = try? HTTPClient().localStatus(path).size, let read = FileManager.default.contents(atPath: path) else { return false }
            return read.count < size
        }, "no file that reads short of its size in \(candidates)")
        let error = #expect(throws: HTTPError.self) { try client.get(HTTPRequest(url: "file://" + path)) }
        #expect(error?.kind == .io, "\(String(describing: error))")
        #expect(error?.reason.contains("could not be read to its end") == true, "\(String(describing: error))")
        // A file read whole is no read error.
        #expect(try client.get(HTTPRequest(url: "file://" + root.file("hello.txt"))).body == Data("hello, map\n".utf8))
    }

    /// A redirect to `file:` is not followed, and the message names the server's answer, not
    /// libcurl's build (found by an attack: "Protocol "file" not supported or disabled in libcurl").
    @Test func aRedirectToAFileIsNamed() throws {
        try root.write("moved.txt.redirect", "file:///etc/hostname\n")
        let error = #expect(throws: HTTPError.self) { try client.get(HTTPRequest(url: url("/moved.txt"))) }
        guard case .transport(let code, _, let failedURL) = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(code == 1 && failedURL == url("/moved.txt"))
        #expect(error?.reason.contains("redirected to file:///etc/hostname, which mapgate does not follow (only http and https)") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("disabled in libcurl") == false)
        #expect(error?.isTransient == false)
    }

    /// Found by an attack: a plain http redirect to a place that answers something that is not
    /// HTTP was said as "the server redirected from https to plain http", with no https anywhere.
    /// libcurl's words stand, and the place that failed is named: where the redirect led.
    @Test func aRedirectToSomethingThatIsNotHTTPIsSaidAsThat() throws {
        let script = root.file("not-http.py")
        try root.write("not-http.py", """
            import socket
            s = socket.socket()
            s.bind(('127.0.0.1', 0))
            s.listen()
            print(s.getsockname()[1], flush=True)
            while True:
                c, _ = s.accept()
                c.recv(4096)
                c.sendall(b'not http at all\\r\\n')
                c.close()
            """)
        let server = try BackgroundProcess("/usr/bin/python3", [script])
        defer { server.stop() }
        let port = try #require(server.firstLine().flatMap(Int.init), "\(server.stderr)")
        try root.write("odd.txt.redirect", "http://127.0.0.1:\(port)/x\n")
        let error = #expect(throws: HTTPError.self) { try client.get(HTTPRequest(url: url("/odd.txt"))) }
        guard case .transport(_, _, let failedURL) = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(failedURL == "http://127.0.0.1:\(port)/x", "\(failedURL)")
        #expect(error?.reason.contains("https") == false, "\(error?.reason ?? "")")
    }

    @Test func connectionRefusedNamesTheURL() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: "http://127.0.0.1:1/x", connectTimeout: 2))
        }
        guard case .transport(let code, _, let failedURL) = error else { Issue.record("wrong error"); return }
        #expect(code == 7)  // CURLE_COULDNT_CONNECT
        #expect(failedURL == "http://127.0.0.1:1/x")
    }

    @Test func progressCallbackCancels() throws {
        let error = #expect(throws: HTTPError.self) {
            try client.stream(HTTPRequest(url: url("/blob.bin")), progress: { received, _ in received < 1 }) { _ in }
        }
        #expect(error == .cancelled(url: url("/blob.bin")))
    }

    @Test func sinkErrorStopsTheTransferAndIsRethrown() throws {
        struct Full: Error {}
        #expect(throws: Full.self) {
            try client.stream(HTTPRequest(url: url("/blob.bin"))) { _ in throw Full() }
        }
    }

    @Test func bodyLimitIsEnforced() throws {
        #expect(throws: HTTPError.self) {
            try client.get(HTTPRequest(url: url("/blob.bin")), maxBodyBytes: 1000)
        }
    }

    /// Every `curl_easy_setopt` is checked: an option libcurl refuses (here a URL over its 8 MB
    /// input limit) stops the request with the reason instead of being ignored.
    @Test func anOptionLibcurlRefusesStopsTheRequest() {
        let url = "http://127.0.0.1/" + String(repeating: "a", count: 8_000_001)
        let error = #expect(throws: HTTPError.self) { try HTTPClient().get(HTTPRequest(url: url)) }
        #expect(error?.localizedDescription.contains("libcurl refused option") == true, "\(String(describing: error))")
    }
}
