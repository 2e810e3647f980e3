import FoundationEssentials
import MapGateBase

extension PMTilesArchive {
    /// The archive's metadata JSON object (empty when it has none).
    public func jsonMetadata() throws -> [String: JSONValue] {
        guard header.metadataLength > 0 else { return [:] }
        let what = L.localized("the metadata")
        let bytes = try file.read(offset: header.metadataOffset, length: header.metadataLength)
        let plain = try Self.decompress(bytes, compression: header.internalCompression, limit: Self.metadataLimit, what: what, path: path)
        let value: JSONValue
        do {
            value = try JSONValue(parsing: plain)
        } catch {
            throw fail(L.localized("its metadata is not JSON: %1$s", "\(error)"))
        }
        guard let object = value.objectValue else { throw fail(L.localized("its metadata is not a JSON object")) }
        return object
    }

    /// The metadata as an MBTiles file has it: text values as they are, numbers and Booleans as
    /// text, `vector_layers`, `tilestats` and any other object or array in `json`; `format` from
    /// the tile type, `minzoom`, `maxzoom`, `bounds` and `center` from the header where the JSON
    /// has none; no `scheme` (the MBTiles rows written are TMS whatever the archive's JSON says).
    /// Values over ``MBTilesFile/metadataLimit(for:)`` are left out, as an MBTiles file's are.
    public func metadata() throws -> [String: String] {
        try metadata(whole: false)
    }

    /// ``metadata()`` with `whole`, every value at any length: for an MBTiles copy of the archive
    /// (`publish`), which keeps what the archive holds as an MBTiles input keeps its own (found by
    /// an attack: an 18 KB `description` vanished from the package and every install).
    public func metadata(whole: Bool) throws -> [String: String] {
        var result: [String: String] = [:]
        var json: [String: JSONValue] = [:]
        for (key, value) in try jsonMetadata() {
            switch value {
            case .string(let text): result[key] = text
            case .integer(let number): result[key] = String(number)
            case .double(let number): result[key] = Self.text(number)
            case .bool(let flag): result[key] = flag ? "true" : "false"
            case .null: continue
            case .array, .object: json[key] = value
            }
        }
        // A `json` text (some converters keep MBTiles' key as it was): its fields, under the top level's.
        if let text = result["json"], let inner = (try? JSONValue(parsing: Data(text.utf8)))?.objectValue {
            json.merge(inner) { top, _ in top }
            result["json"] = nil
        }
        if !json.isEmpty, let data = try? JSONValue.object(json).encoded([.sortedKeys]) {
            result["json"] = String(decoding: data, as: UTF8.self)
        }
        result["scheme"] = nil
        if let format = header.tileType.format { result["format"] = format.rawValue }
        if result["minzoom"] == nil { result["minzoom"] = String(header.minZoom) }
        if result["maxzoom"] == nil { result["maxzoom"] = String(header.maxZoom) }
        let degrees = { (e7: Int32) in Self.text(Double(e7) / 10_000_000) }
        if result["bounds"] == nil, header.minLongitudeE7 != header.maxLongitudeE7 || header.minLatitudeE7 != header.maxLatitudeE7 {
            result["bounds"] = [header.minLongitudeE7, header.minLatitudeE7, header.maxLongitudeE7, header.maxLatitudeE7].map(degrees).joined(separator: ",")
        }
        if result["center"] == nil, header.centerLongitudeE7 != 0 || header.centerLatitudeE7 != 0 || header.centerZoom != 0 {
            result["center"] = "\(degrees(header.centerLongitudeE7)),\(degrees(header.centerLatitudeE7)),\(header.centerZoom)"
        }
        return whole ? result : result.filter { $0.value.utf8.count <= MBTilesFile.metadataLimit(for: $0.key) }
    }

    /// A number as metadata text: `12` for a whole number, else as Swift prints it.
    static func text(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
