import Foundation
import Synchronization

/// What every worker of a tile server shares: the regions on offer, the gate, the settings.
public final class TileService: Sendable {
    /// A served region: its record and the TileJSON facts read once at start.
    public struct Region: Sendable {
        public var record: InstalledRegion
        public var path: String
        public var name: String
        public var attribution: String?
        public var description: String?
        public var bounds: [Double]
        public var center: [Double]
        public var minzoom: Int
        public var maxzoom: Int
        /// `vector_layers` from the `json` metadata of a `pbf` region, as JSON text.
        public var vectorLayersJSON: String?
        /// Strong ETags change when the installed file does.
        public var etagPrefix: String { String(record.sha256.prefix(16)) }
    }

    public let regions: [String: Region]
    public let gate: GateWatch
    public let leafletPath: String
    /// The address the server was asked to bind, for URLs when a request has no usable Host.
    public let fallbackHost: String

    public init(regions: [Region], gate: GateWatch, leafletPath: String, fallbackHost: String) {
        self.regions = Dictionary(uniqueKeysWithValues: regions.map { ($0.record.id, $0) })
        self.gate = gate
        self.leafletPath = leafletPath
        self.fallbackHost = fallbackHost
    }

    /// Reads the installed regions' facts from their files.
    public static func loadRegions(from library: RegionLibrary) throws -> [Region] {
        try library.installed().compactMap { record in
            let path = library.directory.regionPath(record.id)
            guard let file = try? MBTilesFile(path: path) else { return nil }
            let metadata = (try? file.metadata()) ?? [:]
            let zoom = (try? file.zoomRange()) ?? nil
            let minzoom = zoom?.lowerBound ?? record.minzoom ?? 0
            let maxzoom = zoom?.upperBound ?? record.maxzoom ?? 14
            let bounds = (try? file.bounds()) ?? record.bounds ?? [-180, -85.0511, 180, 85.0511]
            var center = [(bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2, Double(minzoom)]
            let centerValues = metadata["center"]?.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            if let centerValues, centerValues.count == 3 { center = centerValues }
            var vectorLayers: String?
            if record.format == .pbf, let json = metadata["json"],
                let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                let layers = object["vector_layers"], let data = try? JSONSerialization.data(withJSONObject: layers)
            {
                vectorLayers = String(decoding: data, as: UTF8.self)
            }
            return Region(
                record: record, path: path, name: metadata["name"] ?? record.name, attribution: metadata["attribution"],
                description: metadata["description"], bounds: bounds, center: center, minzoom: minzoom, maxzoom: maxzoom,
                vectorLayersJSON: vectorLayers)
        }
    }
}
