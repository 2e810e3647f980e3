import FoundationEssentials
import MapGateBase

/// A publisher's style as it travels and is installed: one JSON file (`packages/NAME-VERSION.style.json.gz`
/// on the publisher's side, `<data>/styles/NAME.json` once installed) holding the style, already
/// pointing at mapgate's local URLs (``StyleSheet``), and its sprites.
///
/// One file, so that a style is downloaded, verified and swapped in exactly as a region is.
public struct StyleBundle: Codable, Sendable, Equatable {
    /// The only format this mapgate reads.
    public static let currentFormat = 1
    /// The sprite files a style may carry, as MapLibre asks for them (`SPRITE.json`, `SPRITE@2x.png`, …).
    public static let spriteFiles = ["sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png"]
    /// The largest bundle accepted (styles are kilobytes; sprite sheets a few megabytes).
    public static let maximumSize: Int64 = 64 << 20

    public var formatVersion: Int
    public var id: String
    public var name: String
    public var version: String
    /// The regions the style draws (its sources), sorted.
    public var regions: [String]
    /// The style document (MapLibre style spec version 8), as JSON text, with `local://` URLs.
    public var style: String
    /// The sprite files by name (one of ``spriteFiles``); base64 in the JSON.
    public var sprites: [String: Data]

    public init(id: String, name: String, version: String, regions: [String], style: String, sprites: [String: Data]) {
        formatVersion = Self.currentFormat
        self.id = id
        self.name = name
        self.version = version
        self.regions = regions
        self.style = style
        self.sprites = sprites
    }

    /// Deterministic bytes: sorted keys, a final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// Reads and checks a bundle: its format, its id, a style that is a JSON object whose
    /// sources are all local, sprites that are known files (PNG sheets that are PNG).
    public static func decode(_ data: Data, expectedID: String) throws -> StyleBundle {
        func fail(_ reason: String) -> StyleError { StyleError(style: expectedID, reason: reason) }
        guard Int64(data.count) <= maximumSize else { throw fail(L.localized("the style package is larger than %1$s", "\(ByteCount.text(maximumSize))")) }
        let bundle: StyleBundle
        do {
            bundle = try JSONDecoder().decode(StyleBundle.self, from: data)
        } catch {
            throw fail(L.localized("not a mapgate style package (%1$s bytes)", "\(data.count)"))
        }
        guard bundle.formatVersion == currentFormat else {
            throw fail(L.localized("style package format %1$s is not supported (mapgate reads %2$s)", "\(bundle.formatVersion)", "\(currentFormat)"))
        }
        guard bundle.id == expectedID else { throw fail(L.localized("the package holds style \"%1$s\"", "\(bundle.id)")) }
        for (file, content) in bundle.sprites {
            guard spriteFiles.contains(file) else { throw fail(L.localized("unknown sprite file \"%1$s\"", "\(file)")) }
            if file.hasSuffix(".png"), !content.starts(with: StyleSheet.pngSignature) { throw fail(L.localized("%1$s is not a PNG image", "\(file)")) }
        }
        try StyleSheet.checkInstalled(bundle.style, style: expectedID, regions: bundle.regions)
        return bundle
    }

    /// The style for a client that reached the server at `baseURL` (`http://host:port`): every
    /// `local://` URL made absolute. The published text is mapgate's own encoding (slashes not
    /// escaped), so the URLs are plain `"local://…` strings.
    public func style(baseURL: String) -> Data {
        Data(style.replacing("\"" + StyleSheet.localScheme, with: "\"" + baseURL + "/").utf8)
    }
}
