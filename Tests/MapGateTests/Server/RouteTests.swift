import MapGate
import Testing

@testable import MapGateServer

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
        ("/styles.json", .styleList, "styles", true),
        ("/styles/night/style.json", .publishedStyle(id: "night", file: "style.json"), "styles", true),
        ("/styles/night/sprite@2x.png", .publishedStyle(id: "night", file: "sprite@2x.png"), "styles", true),
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

/// The one parser of tile coordinates, for `mapgate tile` and the server.
@Suite struct TileCoordinateTests {
    @Test(arguments: [("0", "0", "0", true), ("2", "3", "3", true), ("2", "4", "0", false), ("31", "0", "0", false),
                      ("-1", "0", "0", false), ("+1", "0", "0", false), (" 1", "0", "0", false), ("1", "0", "", false),
                      ("30", "1073741823", "0", true), ("1", "99999999999", "0", false)])
    func onlyXYZCoordinatesWithinTheZoomParse(z: String, x: String, y: String, valid: Bool) {
        let coordinate = TileCoordinate(z: z, x: x, y: y)
        #expect((coordinate != nil) == valid, "\(z)/\(x)/\(y)")
        if let coordinate { #expect(coordinate.description == "\(z)/\(x)/\(y)") }
    }

    /// A file's rows and zooms can be any integers: the flip never traps, and flipping twice gives
    /// the row back (found by the fuzzer: zoom 63 overflowed while every tile was read;
    /// `Fuzz/corpus/mbtiles/zoom-past-63.mbtiles`).
    @Test(arguments: [(3, 63), (Int.min, 63), (Int.max, 0), (0, 64), (5, -1), (2, 2), (Int.min, Int.min)])
    func theRowFlipIsTotal(row: Int, zoom: Int) {
        #expect(TileCoordinate.flippedRow(TileCoordinate.flippedRow(row, zoom: zoom), zoom: zoom) == row)
        #expect(TileCoordinate.flippedRow(2, zoom: 2) == 1)
    }

    /// A path that names one file by several paths or one outside what is served is refused
    /// before any route; dots inside a segment are a name's. The one-pass check (made for speed,
    /// issue 42) says what the searches it replaced said, for each path here, in the same order.
    @Test(arguments: [
        "/plain/0/0/0.png", "/a..b/0/0/0.png", "/.../0/0/0.png", "/a./0/0/0.png", "/.a/0/0/0.png", "/", "",
        "/plain/../0/0/0.png", "/plain/./0/0/0.png", "/plain/0/0/..", "/plain/0/0/.", "/..", "/.", "./x", "../x",
        "//plain", "/plain//0", "/plain/", "/plain/0\\0", "/plain/\u{0}/0", "/\\/../x", "//..", "/a/\u{0}//..",
    ])
    func aPathsProblemIsNamed(_ path: String) {
        let expected: String? =
            if path.utf8.contains(0x5C) { "a backslash is not a path separator here" }
            else if path.utf8.contains(0) { "it holds a NUL" }
            else if path.contains("//") { "it has an empty segment (//)" }
            else if path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) { "it has a . or .. segment" }
            else { nil }
        #expect(TileRequestHandler.pathProblem(path) == expected, "\(path)")
    }

    /// A tile's numbers are decimal digits only, at most 10 of them (parsed on the bytes since
    /// issue 42): no sign, space, other script's digits, combining mark or exponent.
    @Test(arguments: [
        ("7", 7), ("0", 0), ("0123456789", 123_456_789), ("9999999999", nil), ("12345678901", nil), ("", nil), ("-1", nil), ("+1", nil),
        (" 1", nil), ("1 ", nil), ("1e2", nil), ("\u{0663}", nil), ("1\u{301}", nil), ("\u{FF11}", nil), ("0x1", nil),
    ])
    func aTilesNumbersAreDecimalDigits(_ text: String, _ expected: Int?) {
        // 9999999999 parses, and is past the deepest zoom's range: refused as out of range.
        let zoom = String(TileCoordinate.maximumZoom)
        #expect(TileCoordinate(z: zoom, x: "0", y: text)?.y == expected, "\(text)")
        #expect(TileCoordinate(z: zoom, x: text, y: "0")?.x == expected, "\(text)")
    }
}
