// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "mapgate",
    products: [
        .executable(name: "mapgate", targets: ["mapgate"]),
        .library(name: "MapGate", targets: ["MapGate"]),
    ],
    targets: [
        // libcurl, libmicrohttpd, FreeType and libcrypto are opened with dlopen when first needed,
        // not linked (docs/decisions/dlopen-libraries.md): no pkgConfig, whose flags would link
        // them. Their headers (libcurl4-openssl-dev, libmicrohttpd-dev, libfreetype-dev,
        // libssl-dev) are still needed to build.
        .systemLibrary(name: "CCurl"),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto"),
        .systemLibrary(name: "CMicroHTTPD"),
        // A C target, not a system library: its header includes no FreeType header, so only
        // freetype.c needs FreeType's include folder (`pkg-config --cflags freetype2`).
        .target(name: "CFreeType", cSettings: [.unsafeFlags(["-I/usr/include/freetype2"])]),
        // The same for h2o (libh2o-evloop-dev): only ch2o.c includes h2o's headers.
        .target(name: "CH2O"),
        .systemLibrary(name: "CLinux"),
        // The library, in layers: each target imports only the ones above it here
        // (docs/decisions/library-targets.md), and only the C libraries its own files import.
        // Support, Values, Codec, Concurrency, HTTP. Support's SharedLibrary names (and loads)
        // every library opened with dlopen, so all of them but SQLite are attached here.
        .target(
            name: "MapGateBase",
            dependencies: ["CCurl", "CZlib", "CCrypto", "CMicroHTTPD", "CH2O", "CFreeType", "CLinux"]),
        // SQLite, Tiles, Delta, State, Styles.
        .target(
            name: "MapGateStorage",
            dependencies: ["MapGateBase", "CSQLite", "CCrypto"]),
        // Signing, Policy, Config, Lookup, Catalog, Gate.
        .target(
            name: "MapGateTrust",
            dependencies: ["MapGateBase", "MapGateStorage", "CSQLite", "CCrypto"]),
        // Regions, Sync, Publish, Mirror.
        .target(
            name: "MapGateWorkflows",
            dependencies: ["MapGateBase", "MapGateStorage", "MapGateTrust", "CLinux"]),
        // HTTPServer, Glyphs, Server.
        .target(
            name: "MapGateServer",
            dependencies: ["MapGateBase", "MapGateStorage", "MapGateTrust", "MapGateWorkflows", "CMicroHTTPD", "CH2O", "CFreeType", "CLinux"],
            // The viewer pages' scripts and styles, as files the build embeds (ViewerAssets): no
            // resource bundle to install beside the binary.
            resources: ["raster-viewer.js", "raster-viewer.css", "vector-viewer.js", "vector-viewer.css", "update-watcher.js", "update-watcher.css"]
                .map { .embedInCode("Viewer/" + $0) }),
        // The umbrella: only `@_exported import` of each layer, so that `import MapGate` is the library.
        .target(
            name: "MapGate",
            dependencies: ["MapGateBase", "MapGateStorage", "MapGateTrust", "MapGateWorkflows", "MapGateServer"]),
        .target(
            name: "MapGateDemo",
            dependencies: ["MapGate"]),
        .executableTarget(
            name: "mapgate",
            dependencies: ["MapGate", "MapGateDemo"]),
        .target(
            name: "TestSupport",
            dependencies: ["MapGate", "MapGateDemo", "CZlib"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "MapGateTests",
            // The layers too: a few tests reach their internals with `@testable import`.
            dependencies: [
                "MapGate", "MapGateBase", "MapGateStorage", "MapGateTrust", "MapGateWorkflows", "MapGateServer",
                "MapGateDemo", "TestSupport",
            ]),
        .testTarget(
            name: "mapgateTests",
            dependencies: ["MapGate", "MapGateDemo", "TestSupport", "mapgate"]),
    ],
    swiftLanguageModes: [.v6]
)
