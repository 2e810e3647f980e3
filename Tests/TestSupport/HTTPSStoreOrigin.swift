import Foundation
import MapGate

/// A lookup service over real TLS on 127.0.0.1 (Python's `http.server` with a certificate made
/// by `openssl` for this run) whose `Date` header the test sets: for the gate's trusted time.
public final class HTTPSStoreOrigin: @unchecked Sendable {
    // Set once in init.
    private let folder: TemporaryDirectory
    private let server: BackgroundProcess
    public let port: Int
    /// The certificate to trust (a policy's `lookupCAFile`).
    public let certificate: String

    public var lookupURL: String { "https://127.0.0.1:\(port)/lookup" }

    public init() throws {
        folder = try TemporaryDirectory()
        certificate = folder.file("cert.pem")
        let made = try runProcess(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "36500", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder.file("key.pem"), "-out", certificate,
            ])
        guard made.status == 0 else { throw MissingFixture(path: "a certificate from openssl: \(made.stderr)") }
        let script = try folder.write(
            "serve.py",
            """
            import http.server, os, ssl, sys
            root = sys.argv[1]
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = open(os.path.join(root, 'lookup.json'), 'rb').read()
                    date = open(os.path.join(root, 'date.txt')).read().strip()
                    self.send_response_only(200)
                    if date:
                        self.send_header('Date', date)
                    age = open(os.path.join(root, 'age.txt')).read().strip() if os.path.exists(os.path.join(root, 'age.txt')) else ''
                    if age:
                        self.send_header('Age', age)
                    self.send_header('Content-Type', 'application/json')
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(os.path.join(root, 'cert.pem'), os.path.join(root, 'key.pem'))
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """)
        try folder.write("date.txt", "")
        try folder.write("lookup.json", "{}")
        server = try BackgroundProcess("/usr/bin/python3", [script, folder.path])
        guard let line = server.firstLine(), let port = Int(line) else {
            throw MissingFixture(path: "an HTTPS origin from python3: \(server.stderr)")
        }
        self.port = port
    }

    deinit {
        server.stop()
    }

    /// The next answers report `version` for app `trackID`, with `Date: date` (none when nil).
    public func answer(version: String, trackID: Int, released: Date? = nil, date: Date?, age: Int? = nil) throws {
        try answer(version: version, trackID: trackID, released: released, dateHeader: date.map(HTTPDate.string) ?? "")
        try folder.write("age.txt", age.map(String.init) ?? "")
    }

    /// The same, with the `Date` header's text as given (a date no `Date` can be written as).
    public func answer(version: String, trackID: Int, released: Date? = nil, dateHeader: String) throws {
        let released = released.map { #","currentVersionReleaseDate":"\#(ISODate.string($0))""# } ?? ""
        try folder.write(
            "lookup.json",
            #"{"resultCount":1,"results":[{"trackId":\#(trackID),"version":"\#(version)","trackViewUrl":"https://apps.example/m"\#(released)}]}"#)
        try folder.write("date.txt", dateHeader)
    }
}
