import Foundation
import MapGate
import Testing

/// A region whose id is a route (`view`: `/view/0/0/0.png` is the viewer's path) could be
/// installed but never served: such ids are refused where every id is checked.
@Suite struct ReservedRegionIDTests {
    @Test(arguments: ["view", "health", "metrics", "fonts", "styles", "index", "sprites", "_leaflet", "_maplibre"])
    func routeNamesAreNotRegionIDs(id: String) throws {
        #expect(!Catalog.isValidRegionID(id))
        let hash = String(repeating: "0f", count: 32)
        let entry: [String: Any] = [
            "id": id, "name": "R", "version": "1", "url": "r.mbtiles.gz", "size": 1000, "sha256": hash, "installedSize": 4000,
            "format": "png", "bounds": [0, 0, 1, 1], "minzoom": 0, "maxzoom": 4,
        ]
        let object: [String: Any] = ["formatVersion": 1, "publisher": "P", "generated": "2026-11-01T00:00:00Z", "regions": [entry]]
        let catalog = try Catalog.parse(try JSONSerialization.data(withJSONObject: object), sourceURL: "https://maps.example/catalog.json")
        #expect(catalog.regions.isEmpty)
        #expect(catalog.rejected.first?.reason.contains("invalid id") == true)
        if !id.hasPrefix("_") {  // `_leaflet` and `_maplibre` never matched the pattern
            #expect(catalog.rejected.first?.reason.contains("is reserved for the tile server's routes") == true, "\(catalog.rejected.first?.reason ?? "")")
        }
    }

    @Test(arguments: ["viewer", "views", "view-1", "healthy", "kr-seoul"])
    func namesNearRoutesStayValid(id: String) {
        #expect(Catalog.isValidRegionID(id))
    }
}
