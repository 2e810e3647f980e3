// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "mapgate",
    products: [
        .executable(name: "mapgate", targets: ["mapgate"]),
        .library(name: "MapGate", targets: ["MapGate"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CFreeType", pkgConfig: "freetype2",
            providers: [.apt(["libfreetype-dev"])]),
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
