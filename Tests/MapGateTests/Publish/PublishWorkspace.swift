import Foundation
import MapGateDemo
import MapGate
import TestSupport

/// An input folder, an output folder, a minisign key pair made by the real minisign, and a
/// manual clock: what the publisher tests work with.
final class PublishWorkspace {
    let work: TemporaryDirectory
    let minisign: MinisignTool
    let keys: MinisignTool.KeyPair
    let secretKey: MinisignSecretKey
    let time = ManualTime(ISODate.parse("2026-11-01T00:00:00Z")!)

    var input: String { work.file("in") }
    var output: String { work.file("out") }
    var catalogPath: String { output + "/catalog.json" }

    init() throws {
        work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.file("in"), withIntermediateDirectories: true)
        minisign = try MinisignTool()
        keys = try minisign.generateKeyPair(named: "publisher")
        secretKey = try MinisignSecretKey(text: try keys.secretKeyText, password: nil)
    }

    func options(_ change: (inout PublishOptions) -> Void = { _ in }) -> PublishOptions {
        var options = PublishOptions(inputDirectory: input, outputDirectory: output)
        change(&options)
        return options
    }

    @discardableResult
    func publish(_ change: (inout PublishOptions) -> Void = { _ in }) throws -> PublishReport {
        try Publisher(options: options(change), clock: time.clock).publish(signingKey: secretKey)
    }

    /// Writes `in/<name>` from tiles and metadata (format png unless given).
    @discardableResult
    func writeRegion(_ name: String, tiles: [TileKey: Data?], metadata: [String: String?]) throws -> String {
        let path = input + "/" + name
        for suffix in ["", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try DeltaTestFiles.write(path, tiles: tiles, metadata: ["format": "png"].merging(metadata) { $1 })
        return path
    }

    func catalog() throws -> Catalog {
        try Catalog.parse(try Data(contentsOf: URL(fileURLWithPath: catalogPath)), sourceURL: URL(fileURLWithPath: catalogPath).absoluteString)
    }

    /// Every file of the output folder with its bytes.
    func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: output)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = output + "/" + relative
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return files
    }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: output + "/" + relative) }

    /// Gunzips a package of the output folder into the work folder.
    func gunzip(_ relative: String, to name: String) throws -> String {
        let result = try runProcess("/bin/gzip", ["-dc", output + "/" + relative])
        guard result.status == 0 else { throw MissingFixture(path: "gunzip of \(relative): \(result.stderr)") }
        let path = work.file(name)
        try result.stdoutData.write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension DeltaTestFiles {
    /// `tiles` with the first `count` tiles (in TMS order) given other bytes.
    static func changing(_ count: Int, of tiles: [TileKey: Data?], seed: UInt64) -> [TileKey: Data?] {
        var generator = SeededGenerator(seed: seed)
        var changed = tiles
        for key in tiles.keys.sorted().prefix(count) {
            changed[key] = .some(tileBytes(png: true, size: 200, using: &generator))
        }
        return changed
    }
}
