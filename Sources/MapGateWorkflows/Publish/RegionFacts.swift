import FoundationEssentials
import MapGateBase
import MapGateStorage

/// What the catalog says about a region's tiles, read from the MBTiles file after it passed the
/// checks `sync` makes (``MBTilesInspection``) and `publish`'s own (finite bounds in range).
struct RegionFacts: Sendable, Equatable {
    var format: TileFormat
    /// The zoom range by the one rule, ``MBTilesInspection/zoomRange(tiles:metadata:)``.
    var minzoom: Int
    var maxzoom: Int
    var bounds: [Double]?
    /// martin's `agg_tiles_hash`; nil when not asked for (a dry run).
    var contentHash: String?

    /// Checks the file at `path` and reads its facts. Errors name the file.
    static func read(path: String, hashing: Bool) throws -> RegionFacts {
        func fail(_ reason: String) -> PublishError { PublishError(path, reason) }
        let inspection: MBTilesInspection
        do {
            inspection = try MBTilesInspection.inspect(path, immutable: true)
        } catch let error as MBTilesError {
            throw fail(error.reason)
        }
        let (minzoom, maxzoom) = (inspection.zoom.lowerBound, inspection.zoom.upperBound)
        var bounds: [Double]?
        if let text = inspection.boundsText {
            guard let values = inspection.bounds, values.allSatisfy(\.isFinite),
                (-180...180).contains(values[0]), (-180...180).contains(values[2]),
                (-90...90).contains(values[1]), (-90...90).contains(values[3]), values[1] <= values[3]
            else {
                throw fail(L.localized("metadata bounds \"%1$s\" are not four finite numbers west,south,east,north inside the world", "\(text)"))
            }
            bounds = values
        }
        if inspection.format == .pbf {
            let declared = VectorStyle.layers(fromMetadataJSON: inspection.metadata["json"]).map(\.id)
            if declared.isEmpty { throw fail(try missingVectorLayers(path: path)) }
            if let problem = unmatchedVectorLayers(declared, path: path) { throw fail(problem) }
        }
        var contentHash: String?
        if hashing {
            do {
                let hash = try TilesetHash.compute(ofFileAt: path, immutable: true, bombCheck: .whole)
                if let problem = hash.nullTileProblem { throw fail(problem) }
                contentHash = hash.hex
            } catch let error as DeltaError {
                throw fail(L.localized("cannot compute its agg_tiles_hash: %1$s", "\(errorMessage(error))"))
            } catch let error as SQLiteError {
                throw fail(L.localized("cannot compute its agg_tiles_hash: %1$s", "\(error.message)"))
            }
        }
        return RegionFacts(format: inspection.format, minzoom: minzoom, maxzoom: maxzoom, bounds: bounds, contentHash: contentHash)
    }

    /// Why a `pbf` region whose `vector_layers` name none of the layers its first tiles have is
    /// refused (the viewer and style.json would draw layers that are not there: a blank map);
    /// nil when one matches, or when no layer name could be read from the tiles.
    static func unmatchedVectorLayers(_ declared: [String], path: String) -> String? {
        let names = (try? MBTilesFile(path: path, immutable: true).sampledVectorLayerNames()) ?? []
        guard !names.isEmpty, Set(declared).isDisjoint(with: names) else { return nil }
        return L.localized(
            "its metadata \"json\" lists the vector_layers %1$s, but its tiles have the layers %2$s (in its first tiles): the viewer and style.json would show nothing. List the layers the tiles have: %3$s",
            declared.joined(separator: ", "), names.joined(separator: ", "), layerList(names))
    }

    /// `{"vector_layers":[…]}` naming `names`, for a message.
    static func layerList(_ names: [String]) -> String {
        let layers = names.map { name -> String in
            let data = (try? JSONValue.object(["id": .string(name), "fields": .object([:])]).encoded([.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        // (not translated: JSON)
        return "{\"vector_layers\":[\(layers.joined(separator: ","))]}"
    }

    /// Why a `pbf` region without `vector_layers` is refused, with the layers its tiles have and
    /// the metadata that would list them.
    static func missingVectorLayers(path: String) throws -> String {
        let names = (try? MBTilesFile(path: path, immutable: true).sampledVectorLayerNames()) ?? []
        let start = "a pbf region needs \"vector_layers\" in its metadata \"json\" (a json over 1 MiB is left out): without them the viewer and style.json show nothing"
        guard !names.isEmpty else { return start + "; no layer name could be read from its first tiles either" }
        return start + ". Its tiles have the layers \(names.joined(separator: ", ")): set metadata \"json\" to \(layerList(names)) (fields and zooms may be added)"
    }
}
