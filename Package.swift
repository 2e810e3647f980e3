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
        .systemLibrary(name: "CLinux"),
        .target(
            name: "MapGate",
            dependencies: ["CCurl", "CSQLite", "CZlib", "CCrypto", "CMicroHTTPD", "CFreeType", "CLinux"]),
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
            dependencies: ["MapGate", "MapGateDemo", "TestSupport"]),
        .testTarget(
            name: "mapgateTests",
            dependencies: ["MapGate", "MapGateDemo", "TestSupport", "mapgate"]),
    ],
    swiftLanguageModes: [.v6]
)
