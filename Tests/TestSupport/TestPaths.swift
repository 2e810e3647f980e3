import Foundation
import MapGate

/// Where the tests find the checkout, the built binary and the fixtures.
public enum TestPaths {
    /// The repository root (this file is `Tests/TestSupport/TestPaths.swift`).
    public static let repository: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    /// The project's own `Fixtures/`.
    public static var fixtures: String { repository + "/Fixtures" }

    /// A real-world fixture from `../shared/fixtures/`. Throws, failing the test out loud, when
    /// the folder is missing: these tests never pass in silence without their data.
    public static func shared(_ relative: String) throws -> String {
        let path = URL(fileURLWithPath: repository + "/../shared/fixtures/" + relative).standardized.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw MissingFixture(path: path)
        }
        return path
    }

    /// The `mapgate` binary that `swift build` / `swift test` made.
    public static func binary() throws -> String {
        let candidates = [
            ProcessInfo.processInfo.environment["MAPGATE_BINARY"],
            Bundle.main.bundleURL.deletingLastPathComponent().path + "/mapgate",
            repository + "/.build/debug/mapgate",
        ].compactMap { $0 }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw MissingFixture(path: candidates.joined(separator: " or "))
    }
}

public struct MissingFixture: Error, CustomStringConvertible {
    public let path: String
    public init(path: String) { self.path = path }
    public var description: String {
        "test data missing: \(path) does not exist (the real-world fixtures live in ../shared/fixtures beside the checkout)"
    }
}

/// A temporary directory removed when the value goes away, or at the latest when the process
/// exits: a suite's process (scripts/run-suites) may end while a background thread of its last
/// test (a server's monitor finishing a look) still holds the workspace, and a value alive at
/// exit is never deinitialized. Only a killed process leaves its folders (scripts/test checks).
public final class TemporaryDirectory: @unchecked Sendable {
    // Immutable after init; removal happens once in deinit.
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "mapgate-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        LivingDirectories.add(path)
    }

    deinit {
        LivingDirectories.remove(path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = file(name)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

extension GateSettings {
    /// Settings for library tests whose gate must never look anything up: a made-up app and a
    /// lookup endpoint nobody answers on (never the real store).
    public static let unreachable = GateSettings(appID: 1, lookupURL: "http://127.0.0.1:1/lookup")
}

/// The temporary directories not removed yet, removed by an `atexit` handler if still there.
/// Every removal happens under the one lock: a value deinitialized on a test's thread while the
/// process exits must not remove the same tree at the same time as the handler (each walk then
/// meets files the other took and stops half-way, leaving the rest: seen once in CI).
private enum LivingDirectories {
    private static let paths = Locked<Set<String>>([])
    /// Installed once, with the first directory (a static's initializer runs once, thread-safely).
    private static let exitHandler: Void = {
        atexit {
            LivingDirectories.paths.withLock { paths in
                for path in paths { try? FileManager.default.removeItem(atPath: path) }
                paths.removeAll()
            }
        }
    }()

    static func add(_ path: String) {
        _ = exitHandler
        paths.withLock { _ = $0.insert(path) }
    }

    /// Removes the directory, unless the exit handler did already.
    static func remove(_ path: String) {
        paths.withLock { paths in
            guard paths.remove(path) != nil else { return }
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
