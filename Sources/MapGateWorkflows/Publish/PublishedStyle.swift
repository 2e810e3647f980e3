import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

/// One style of the input folder (`INPUT_DIR/styles/NAME/style.json`, with optional sprites
/// beside it), checked and made into the ``StyleBundle`` its package holds.
struct PublishedStyle: Sendable, Equatable {
    var id: String
    var folder: String
    var bundle: StyleBundle
    /// The bundle's bytes, as installed on a user's machine.
    var bytes: Data
    /// `NAME-VERSION.style.json.gz`, under `packages/`.
    var package: String { "\(id)-\(bundle.version).style.json.gz" }

    /// The styles of `input/styles/`, sorted by name; none when the folder is absent.
    /// - Parameter regions: the regions of this publish and their tile formats.
    static func readAll(input: String, regions: [String: TileFormat]) throws -> [PublishedStyle] {
        let root = input + "/styles"
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else { return [] }
        guard isDirectory else { throw PublishError(root, L.localized("not a folder (styles go in styles/NAME/style.json)")) }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: root).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            throw PublishError(root, L.localized("cannot list it: %1$s", "\(errorMessage(error))"), kind: .io)
        }
        return try names.map { try read(folder: root + "/" + $0, id: $0, regions: regions) }
    }

    static func read(folder: String, id: String, regions: [String: TileFormat]) throws -> PublishedStyle {
        func fail(_ path: String, _ reason: String) -> PublishError { PublishError(path, reason) }
        guard Catalog.isValidStyleID(id) else {
            throw fail(folder, L.localized("a style's folder name is its id, of the form [a-z0-9][a-z0-9._-]{0,63}"))
        }
        let stylePath = folder + "/style.json"
        let styleData = try readFile(stylePath, limit: StyleSheet.maximumSize)
        var sprites: [String: Data] = [:]
        for file in StyleBundle.spriteFiles {
            let path = folder + "/" + file
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let data = try readFile(path, limit: Int(StyleBundle.maximumSize / 4))
            if file.hasSuffix(".png") {
                guard data.starts(with: StyleSheet.pngSignature) else { throw fail(path, L.localized("not a PNG image")) }
            } else {
                guard (try? JSONValue(parsing: data))?.objectValue != nil else {
                    throw fail(path, L.localized("not a sprite index (a JSON object of images, each with x, y, width and height)"))
                }
            }
            sprites[file] = data
        }
        for (index, image) in [("sprite.json", "sprite.png"), ("sprite@2x.json", "sprite@2x.png")] where (sprites[index] == nil) != (sprites[image] == nil) {
            let missing = sprites[index] == nil ? index : image
            throw fail(folder + "/" + missing, "missing: \(index) and \(image) go together")
        }
        if sprites["sprite.json"] == nil, sprites["sprite@2x.json"] != nil {
            throw fail(folder + "/sprite.json", "missing: the @2x sprites come with sprite.json and sprite.png")
        }
        let rewritten: StyleSheet.Rewritten
        do {
            rewritten = try StyleSheet.rewrite(styleData, style: id, regions: regions, hasSprite: sprites["sprite.json"] != nil)
        } catch let error as StyleError {
            throw fail(stylePath, error.reason)
        }
        let name = (try? JSONValue(parsing: styleData))?["name"]?.stringValue
        // The version names the content: the same style and sprites are the same version.
        let digest = try SHA256Hasher()
        try digest.update(Data(rewritten.text.utf8))
        for file in StyleBundle.spriteFiles {
            if let data = sprites[file] {
                try digest.update(Data(file.utf8))
                try digest.update(data)
            }
        }
        try digest.update(Data((name ?? id).utf8))
        let bundle = StyleBundle(
            id: id, name: name ?? id, version: String(try digest.finalizeHex().prefix(12)), regions: rewritten.regions, style: rewritten.text,
            sprites: sprites)
        let bytes = try bundle.encoded()
        guard Int64(bytes.count) <= StyleBundle.maximumSize else {
            throw fail(folder, L.localized("the style and its sprites come to more than %1$s", "\(ByteCount.text(StyleBundle.maximumSize))"))
        }
        return PublishedStyle(id: id, folder: folder, bundle: bundle, bytes: bytes)
    }

    private static func readFile(_ path: String, limit: Int) throws -> Data {
        if let reason = FileManager.default.notRegularFileReason(atPath: path) { throw PublishError(path, reason) }
        let size = FileManager.default.sizeOfItem(atPath: path)
        guard size <= limit else { throw PublishError(path, L.localized("larger than %1$s", "\(ByteCount.text(Int64(limit)))")) }
        guard let data = FileManager.default.contents(atPath: path) else { throw PublishError(path, L.localized("cannot read it"), kind: .io) }
        return data
    }
}
