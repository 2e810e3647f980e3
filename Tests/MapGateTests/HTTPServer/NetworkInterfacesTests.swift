import Foundation
import MapGate
import TestSupport
import Testing

/// `serve --host 0.0.0.0` printed `http://0.0.0.0:PORT/` and answered 421 to the machine's own
/// addresses: the URLs and the allowed hosts now come from the interfaces.
@Suite struct NetworkInterfacesTests {
    @Test func wildcardURLsStartWithLoopbackThenTheInterfaces() {
        let interfaces = ["127.0.0.1", "192.0.2.2", "::1", "2001:db8::5", "10.1.2.3"]
        #expect(NetworkInterfaces.urls(boundHost: "0.0.0.0", port: 8080, interfaces: interfaces)
            == ["http://127.0.0.1:8080", "http://192.0.2.2:8080", "http://10.1.2.3:8080"])
        #expect(NetworkInterfaces.urls(boundHost: "::", port: 80, interfaces: interfaces)
            == ["http://127.0.0.1:80", "http://192.0.2.2:80", "http://10.1.2.3:80", "http://[2001:db8::5]:80"])
        #expect(NetworkInterfaces.urls(boundHost: "192.0.2.2", port: 1, interfaces: interfaces) == ["http://192.0.2.2:1"])
        #expect(NetworkInterfaces.urls(boundHost: "::1", port: 1, interfaces: []) == ["http://[::1]:1"])
    }

    @Test func theMachinesAddressesIncludeLoopback() {
        let addresses = NetworkInterfaces.addresses()
        #expect(addresses.contains("127.0.0.1"), "\(addresses)")
        #expect(!addresses.contains { $0.lowercased().hasPrefix("fe80:") })
    }
}

/// MapLibre is looked for where `scripts/install-deps` puts it and where a Debian package will.
@Suite struct MapLibreFolderTests {
    @Test func theDefaultFallsBackToThePackagedFolderOnlyWhenEmpty() throws {
        let packaged = try TemporaryDirectory()
        let empty = try TemporaryDirectory()
        try Data("//".utf8).write(to: URL(fileURLWithPath: packaged.file("maplibre-gl.js")))
        let local = try TemporaryDirectory()
        // The default folder, empty: the packaged one, which has the files.
        #expect(MapLibreFiles.folder(configured: local.path, default: local.path, fallbacks: [empty.path, packaged.path]) == packaged.path)
        // The default folder with the files: itself.
        try Data("//".utf8).write(to: URL(fileURLWithPath: local.file("maplibre-gl.js")))
        #expect(MapLibreFiles.folder(configured: local.path, default: local.path, fallbacks: [packaged.path]) == local.path)
        // A folder the user named: itself, even empty.
        #expect(MapLibreFiles.folder(configured: empty.path, fallbacks: [packaged.path]) == empty.path)
        #expect(MapLibreFiles.folder(configured: "/nonexistent", fallbacks: [packaged.path]) == "/nonexistent")
    }
}
