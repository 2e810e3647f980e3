import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// A publisher replaces `catalog.json.minisig`, then `catalog.json` (issue 40, item 8): a client
/// that fetched between the two renames holds a pair that belongs to no publish. It asks once
/// more a moment later, and takes the pair then; a pair that still does not match is refused.
@Suite struct CatalogSourcePublishWindowTests {
    let work: TemporaryDirectory
    let key: PublisherKey

    init() throws {
        work = try TemporaryDirectory()
        key = try PublisherKey(in: work.path)
    }

    func catalog(serial: Int) -> Data {
        Data(#"{"formatVersion": 1, "publisher": "Test", "serial": \#(serial), "regions": []}"#.utf8)
    }

    @Test func aPairCaughtBetweenThePublishersRenamesIsFetchedAgain() throws {
        let path = work.file("catalog.json")
        // The publish in progress: the new signature is in place, the old catalog still there.
        try catalog(serial: 2).write(to: URL(fileURLWithPath: path))
        try key.sign(path)
        try catalog(serial: 1).write(to: URL(fileURLWithPath: path))
        var source = CatalogSource(url: "file://" + path, trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.publishWindow = 0.5
        // ... and finishes a moment later.
        let finishing = Thread { Thread.sleep(forTimeInterval: 0.2); try? catalog(serial: 2).write(to: URL(fileURLWithPath: path)) }
        finishing.start()
        let fetched = try source.fetch()
        #expect(fetched.catalog.serial == 2)
    }

    /// A catalog URL with a query (cache busting) or a fragment (found by an attack: the signature
    /// was looked for at `catalog.json?v=2.minisig`, which a server answers with the catalog).
    @Test func theSignatureOfACatalogURLWithAQueryIsBesideItsPath() throws {
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json") == "https://h.example/c.json.minisig")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json?v=2&t=a") == "https://h.example/c.json.minisig?v=2&t=a")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json#top") == "https://h.example/c.json.minisig")
        #expect(CatalogSource.signatureURL(of: "https://h.example/c.json?v=2#top") == "https://h.example/c.json.minisig?v=2")
        let www = work.file("www")
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        try catalog(serial: 4).write(to: URL(fileURLWithPath: www + "/catalog.json"))
        try key.sign(www + "/catalog.json")
        let origin = try TestOrigin(root: www)
        defer { origin.stop() }
        let source = CatalogSource(
            url: origin.baseURL + "/catalog.json?v=2#latest", trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        #expect(try source.fetch().catalog.serial == 4)
        #expect(origin.requests.map(\.target).contains("/catalog.json.minisig?v=2"), "\(origin.requests.map(\.target))")
    }

    /// A signed catalog cut off every 150 bytes by a server that answers each part with other
    /// bytes (its first inverted): joined from those parts it does not match its signature, and
    /// is asked for again whole; what is said is the transfer's failure, not that the publisher's
    /// file "changed after signing" (found by an attack). Cut once, the whole answer is taken.
    @Test(arguments: [false, true])
    func aCatalogSplicedFromWrongPartsIsFetchedWhole(everyTime: Bool) throws {
        let www = work.file("www-\(everyTime)")
        try FileManager.default.createDirectory(atPath: www + "/real", withIntermediateDirectories: true)
        var text = #"{"formatVersion": 1, "publisher": "Test", "serial": 6, "regions": []}"#
        text += String(repeating: " ", count: 600 - text.utf8.count) + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: www + "/real/catalog.json"))
        try key.sign(www + "/real/catalog.json")
        try FileManager.default.moveItem(atPath: www + "/real/catalog.json.minisig", toPath: www + "/catalog.json.minisig")
        let fault = everyTime ? "cut=150,garble" : "cut=150,garble,times=1"
        try Data("/_fault/\(fault)/real/catalog.json\n".utf8).write(to: URL(fileURLWithPath: www + "/catalog.json.redirect"))
        let origin = try TestOrigin(root: www)
        defer { origin.stop() }
        var source = CatalogSource(url: origin.baseURL + "/catalog.json", trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.retryDelays = [0, 0, 0]
        source.publishWindow = 0.1
        if everyTime {
            let error = #expect(throws: (any Error).self) { try source.fetch() }
            let message = error.map { errorMessage($0) } ?? ""
            #expect(!message.contains("changed after signing"), "\(message)")
            #expect(message.contains("catalog"), "\(message)")
        } else {
            #expect(try source.fetch().catalog.serial == 6)
        }
        // Asked for whole after the spliced one: no range in the second round.
        #expect(origin.requests.contains { $0.path.hasSuffix("/real/catalog.json") && $0.range != nil }, "\(origin.requests.map { "\($0.path) \($0.range ?? "")" })")
    }

    /// A cache between (nginx's `proxy_cache`, configured as RFC 9111 asks, to go to the origin
    /// for a request that says `no-cache`) that holds the catalog of before a publish beside the
    /// signature of after it (found by an attack: every run was refused until the cache let the
    /// catalog go). The second try asks for both of the publisher itself.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "nginx-light (scripts/install-deps)"))
    func aCacheThatHoldsTheCatalogOfBeforeAPublishIsAskedPast() throws {
        let www = work.file("www")
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        try catalog(serial: 1).write(to: URL(fileURLWithPath: www + "/catalog.json"))
        try key.sign(www + "/catalog.json")
        let origin = try TestOrigin(root: www)
        defer { origin.stop() }
        let cache = work.file("nginx")
        try FileManager.default.createDirectory(atPath: cache + "/logs", withIntermediateDirectories: true)
        // A free port, let go at once for nginx.
        let port = try TestPorts.free()
        let config = """
            daemon off; master_process off; pid \(cache)/nginx.pid; error_log \(cache)/logs/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(cache)/body; proxy_temp_path \(cache)/proxy;
                fastcgi_temp_path \(cache)/fastcgi; uwsgi_temp_path \(cache)/uwsgi; scgi_temp_path \(cache)/scgi;
                proxy_cache_path \(cache)/cache keys_zone=maps:1m;
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass \(origin.baseURL);
                        proxy_cache maps;
                        proxy_cache_valid 200 10m;
                        proxy_ignore_headers Cache-Control Expires;
                        proxy_cache_bypass $http_pragma $http_cache_control;
                    }
                }
            }
            """
        try config.write(toFile: cache + "/nginx.conf", atomically: true, encoding: .utf8)
        let nginx = try BackgroundProcess("/usr/sbin/nginx", ["-p", cache, "-c", cache + "/nginx.conf"])
        defer { nginx.stop() }
        let base = "http://127.0.0.1:\(port)"
        #expect(waitUntil(timeout: 10) { (try? runProcess("/usr/bin/curl", ["-sf", "-o", "/dev/null", base + "/catalog.json"]).status) == 0 }, "\(nginx.stderr)")
        // The cache now holds the catalog of serial 1; the publisher publishes serial 2.
        try catalog(serial: 2).write(to: URL(fileURLWithPath: www + "/catalog.json"))
        try key.sign(www + "/catalog.json")
        var source = CatalogSource(url: base + "/catalog.json", trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.publishWindow = 0.1
        #expect(try source.fetch().catalog.serial == 2)
        let asked = origin.requests.filter { $0.path == "/catalog.json" }
        #expect(asked.count == 2, "the origin was asked for the catalog once more: \(origin.requests.map(\.path))")
    }

    @Test func aPairThatNeverMatchesIsRefused() throws {
        let path = work.file("catalog.json")
        try catalog(serial: 2).write(to: URL(fileURLWithPath: path))
        try key.sign(path)
        try catalog(serial: 3).write(to: URL(fileURLWithPath: path))
        var source = CatalogSource(url: "file://" + path, trustedKeys: [try key.publicKeyLine], requiresSignature: true, client: HTTPClient())
        source.publishWindow = 0.1
        #expect(throws: CatalogError.self) { try source.fetch() }
    }
}
