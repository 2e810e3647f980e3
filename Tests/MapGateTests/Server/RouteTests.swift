import MapGate
import Testing

/// Every path the server knows, parsed once into a route: what it dispatches to, its metrics
/// label, and whether other origins may read it.
@Suite struct RouteTests {
    @Test(arguments: [
        ("/", Route.index, "index", false),
        ("/health", .health, "health", false),
        ("/metrics", .metrics, "metrics", false),
        ("/_leaflet/leaflet.js", .leaflet("leaflet.js"), "leaflet", true),
        ("/_maplibre/maplibre-gl.css", .maplibre("maplibre-gl.css"), "maplibre", true),
        ("/view/kr-seoul", .viewer("kr-seoul"), "viewer", false),
        ("/fonts.json", .fontList, "fonts", true),
        ("/fonts/DejaVu Sans Book,Noto Sans Regular/0-255.pbf", .glyphs(fontstack: "DejaVu Sans Book,Noto Sans Regular", file: "0-255.pbf"), "fonts", true),
        ("/kr-seoul/style.json", .style("kr-seoul"), "style", true),
        ("/kr-seoul.json", .tileJSON("kr-seoul"), "tilejson", true),
        ("/kr-seoul/3/4/5.pbf", .tile(["kr-seoul", "3", "4", "5.pbf"]), "tile", true),
        ("/kr-seoul/3/4", .other, "other", false),
        ("/fonts/x", .other, "other", false),
    ])
    func pathsParseOnce(path: String, route: Route, name: String, isPublic: Bool) {
        let parsed = Route(path: path)
        #expect(parsed == route)
        #expect(parsed.name == name)
        #expect(parsed.isPublic == isPublic)
        #expect(Route(target: path + "?cache=1") == route)
    }
}
