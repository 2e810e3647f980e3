import Foundation
import MapGate
import TestSupport
import Testing

/// System mode's catalog credentials as a TLS client certificate (issue 36): a publisher's origin
/// that serves only machines holding a certificate from its CA (Python's `ssl` with
/// `CERT_REQUIRED`, certificates made by `openssl` for this run). The client presents it to the
/// catalog's host only, and `CatalogCredentials` refuses a key other users may read.
@Suite struct ClientCertificateTests {
    let folder: TemporaryDirectory
    let server: BackgroundProcess
    let url: String

    init() throws {
        folder = try TemporaryDirectory()
        func openssl(_ arguments: [String]) throws {
            let made = try runProcess("/usr/bin/openssl", arguments)
            try #require(made.status == 0, "openssl \(arguments.first ?? ""): \(made.stderr)")
        }
        let f = folder.file
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=publisher CA", "-keyout", f("ca.key"), "-out", f("ca.pem")])
        for (name, subject, extensions) in [("server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1"), ("client", "/CN=machine-42", "extendedKeyUsage=clientAuth")] {
            try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", f("\(name).key"), "-out", f("\(name).csr")])
            try folder.write("\(name).ext", extensions + "\n")
            try openssl([
                "x509", "-req", "-in", f("\(name).csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial", "-days", "3650",
                "-extfile", f("\(name).ext"), "-out", f("\(name).pem"),
            ])
        }
        chmod(f("client.key"), 0o600)
        let script = try folder.write(
            "serve.py",
            """
            import http.server, os, ssl, sys
            root = sys.argv[1]
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    subject = dict(x[0] for x in self.connection.getpeercert()['subject'])
                    body = ('hello ' + subject['commonName']).encode()
                    self.send_response(200)
                    self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(os.path.join(root, 'server.pem'), os.path.join(root, 'server.key'))
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(os.path.join(root, 'ca.pem'))
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """)
        server = try BackgroundProcess("/usr/bin/python3", [script, folder.path])
        guard let line = server.firstLine(), let port = Int(line) else { throw MissingFixture(path: "an HTTPS origin from python3: \(server.stderr)") }
        url = "https://127.0.0.1:\(port)/catalog.json"
    }

    func client(host: String?) -> HTTPClient {
        var client = HTTPClient(caFile: folder.file("ca.pem"))
        if let host { client.credentials = HTTPClient.HostCredentials(host: host, certificate: folder.file("client.pem"), key: folder.file("client.key")) }
        return client
    }

    @Test func theCertificateOpensTheOriginThatRequiresIt() throws {
        defer { server.stop() }
        let answer = try client(host: "127.0.0.1").get(HTTPRequest(url: url))
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "hello machine-42")
    }

    @Test func withoutItOrForAnotherHostTheOriginRefuses() throws {
        defer { server.stop() }
        for host in [nil, "maps.example.com"] {
            #expect(throws: (any Error).self, "credentials for \(host ?? "no host")") { _ = try client(host: host).get(HTTPRequest(url: url)) }
        }
    }

    @Test func theCredentialsFileNamesACertificateAndAPrivateKey() throws {
        defer { server.stop() }
        let file = try folder.write("credentials", #"{"certificate": "\#(folder.file("client.pem"))", "key": "\#(folder.file("client.key"))"}"#)
        chmod(file, 0o600)
        let loaded = try #require(try CatalogCredentials.load(path: file))
        #expect(loaded.certificate == folder.file("client.pem") && loaded.key == folder.file("client.key") && loaded.authorization == nil)
        // A key other users may read is not the machine's secret: refused, naming it.
        chmod(folder.file("client.key"), 0o644)
        #expect { _ = try CatalogCredentials.load(path: file) } throws: { error in
            "\(error)".contains("client.key") && "\(error)".contains("chmod 0600")
        }
        // A key without its certificate, or nothing at all, is an error naming the key missing.
        try folder.write("credentials", #"{"key": "\#(folder.file("client.key"))"}"#)
        #expect(throws: ConfigurationError.self) { _ = try CatalogCredentials.load(path: file) }
        try folder.write("credentials", "{}")
        #expect(throws: ConfigurationError.self) { _ = try CatalogCredentials.load(path: file) }
    }
}
