import Foundation
import MapGate
import TestSupport
import Testing

/// libcurl, h2o, libmicrohttpd, FreeType and libcrypto are opened with `dlopen` when a command first needs them,
/// not linked (docs/decisions/dlopen-libraries.md): the binary must not need them to start, must
/// still download, serve and render glyphs with them (the other suites do), and must say which
/// package to install when one cannot be opened.
@Suite struct DlopenLibrariesTests {
    /// The sonames and Debian packages of `packaging/dlopen-libraries`.
    static func packagingList() throws -> [(soname: String, package: String)] {
        let text = try String(contentsOfFile: TestPaths.repository + "/packaging/dlopen-libraries", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0].split(separator: " ")
            return words.count >= 2 ? (String(words[0]), String(words[1])) : nil
        }
    }

    @Test func theBinaryLinksNoneOfThem() throws {
        let binary = try TestPaths.binary()
        let dynamic = try runProcess("/usr/bin/readelf", ["-d", binary])
        #expect(dynamic.status == 0, "\(dynamic.stderr)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty)
        for library in SharedLibrary.allCases {
            #expect(!needed.contains { $0.contains("[\(library.soname)]") }, "\(library.soname) is NEEDED: \(needed)")
        }
        let undefined = try runProcess("/usr/bin/nm", ["-D", "--undefined-only", binary])
        #expect(undefined.status == 0, "\(undefined.stderr)")
        let references = undefined.stdout.split(separator: "\n").filter { line in
            ["curl_", "MHD_", "h2o_", "phr_", "FT_", "EVP_", "HMAC", "ERR_", "CRYPTO_", "OPENSSL_", "OSSL_"].contains { line.split(separator: " ").last?.hasPrefix($0) == true }
        }
        #expect(references.isEmpty, "\(references)")
    }

    /// One list for the package's Depends (scripts/package), one in the binary's errors, one in the
    /// shims' dlopen calls: all three name the same files.
    @Test func thePackagingListTheErrorsAndTheShimsAgree() throws {
        let listed = try Self.packagingList()
        #expect(listed.map(\.soname) == SharedLibrary.allCases.map(\.soname))
        #expect(listed.map(\.package) == SharedLibrary.allCases.map(\.debianPackage))
        var opened: [String] = []
        for file in ["Sources/CCurl/shim.h", "Sources/CMicroHTTPD/shim.h", "Sources/CH2O/ch2o.c", "Sources/CFreeType/freetype.c", "Sources/CCrypto/shim.h"] {
            let text = try String(contentsOfFile: TestPaths.repository + "/" + file, encoding: .utf8)
            for part in text.components(separatedBy: "dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER \"").dropFirst() {
                opened.append(String(part.prefix { $0 != "\"" }))
            }
        }
        #expect(opened == SharedLibrary.allCases.map(\.soname))
    }

    /// A library that is there but is not the one expected (here: one with no symbols, mounted
    /// over the system's file for the run) is as good as missing: a clear error and exit 69, no
    /// crash; and the commands that do not need it still work.
    @Test(.tags(.root), .enabled(if: geteuid() == 0, "a private mount namespace needs root (CI runs as root)"))
    func aLibraryThatCannotBeOpenedIsAClearErrorNotACrash() throws {
        let workspace = try CLIWorkspace()
        let mapgate = workspace.mapgate
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["catalogURL": workspace.catalogURL])
        let stubs = try LibraryStandIns.stubs(SharedLibrary.allCases.map(\.soname), in: workspace.work.file("stubs"))
        // An unsigned policy that loosens nothing: a signed one needs libcrypto to be checked.
        let unsigned = workspace.work.file("unsigned-policy.json")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: unsigned))
        let policy = ["MAPGATE_POLICY": unsigned]

        let version = try mapgate.runBare(["--version"], environment: policy, standIns: stubs)
        #expect(version.status == 0 && version.stdout.hasPrefix("mapgate "), "\(version.stderr)")
        let list = try mapgate.run(["list"], environment: policy, standIns: stubs)
        #expect(list.status == 0, "\(list.stderr)")

        let catalog = try mapgate.run(["catalog"], environment: policy, standIns: stubs)
        #expect(catalog.status == 69, "\(catalog.stderr)")
        #expect(catalog.stderr.contains("libcurl.so.4 is needed for downloads"), "\(catalog.stderr)")
        #expect(catalog.stderr.contains("install the Debian package libcurl4"), "\(catalog.stderr)")
        #expect(!catalog.stderr.contains("Fatal error"))

        #expect(try mapgate.run(["sync", "plain"]).status == 0)
        // The gate's sealed record needs libcrypto, which every gated command reads first.
        let status = try mapgate.run(["status"], environment: policy, standIns: stubs)
        #expect(status.status == 69, "\(status.stderr)")
        #expect(status.stderr.contains("libcrypto.so.3 is needed for hashes and signatures"), "\(status.stderr)")
        #expect(status.stderr.contains("install the Debian package libssl3"), "\(status.stderr)")
        #expect(!status.stderr.contains("Fatal error"))
        // A signed policy cannot be checked without libcrypto: the same clear error, never "a bad signature".
        let signed = try mapgate.run(["list"], standIns: stubs)
        #expect(signed.status == 69, "\(signed.stderr)")
        #expect(signed.stderr.contains("install the Debian package libssl3"), "\(signed.stderr)")
        #expect(!signed.stderr.contains("not a valid signature"), "\(signed.stderr)")

        // Only h2o missing, the server's library (with libcrypto missing too, the gate would say so first).
        let serve = try mapgate.run(["serve", "--port", "0"], standIns: ["libh2o-evloop.so.0.13": stubs["libh2o-evloop.so.0.13"] ?? ""])
        #expect(serve.status == 69, "\(serve.stderr)")
        #expect(serve.stderr.contains("install the Debian package libh2o-evloop0.13"), "\(serve.stderr)")

        // FreeType missing, and libmicrohttpd (the test origin's alone): the server runs, and a
        // glyph range is a 503 that says why.
        let server = try mapgate.start(
            ["serve", "--port", "0"],
            standIns: ["libfreetype.so.6": stubs["libfreetype.so.6"] ?? "", "libmicrohttpd.so.12": stubs["libmicrohttpd.so.12"] ?? ""])
        let line = try #require(server.firstLine(), "no output; stderr: \(server.stderr)")
        let base = String(try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast())
        let glyphs = try HTTPClient().get(HTTPRequest(url: base + "/fonts/DejaVu%20Sans%20Book/0-255.pbf"))
        #expect(glyphs.status == 503)
        #expect(String(decoding: glyphs.body, as: UTF8.self).contains("install the Debian package libfreetype6"))
        #expect(try HTTPClient().get(HTTPRequest(url: base + "/plain/0/0/0.png")).status == 200)
        server.signal(SIGTERM)
        #expect(server.wait() == 0)
    }

    /// Issue 25: a junk `libcurl.so.4` found first through `LD_LIBRARY_PATH` made every lookup fail
    /// "as if offline". The libraries are opened from the system's folder by absolute path: the
    /// variable changes nothing, and the lookup and the catalog work.
    @Test func LDLibraryPathCannotStandInForALibrary() throws {
        let workspace = try CLIWorkspace()
        let mapgate = workspace.mapgate
        try workspace.publish(version: "1.5.0")
        try workspace.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
        try mapgate.configure(["appID": 1, "lookupURL": workspace.lookupURL, "catalogURL": workspace.catalogURL])
        let stubs = try LibraryStandIns.stubs(SharedLibrary.allCases.map(\.soname), in: workspace.work.file("stubs"))
        let junk = ["LD_LIBRARY_PATH": workspace.work.file("stubs")]
        #expect(stubs.count == SharedLibrary.allCases.count)
        let check = try mapgate.run(["check", "--json"], environment: junk)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(try MapGateBinary.json(check.stdout)["lookupError"] is NSNull, "\(check.stdout)")
        #expect(try mapgate.run(["sync", "plain"], environment: junk).status == 0)
    }
}
