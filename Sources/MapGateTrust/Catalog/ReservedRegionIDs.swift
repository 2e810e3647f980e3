extension Catalog {
    /// Ids a region cannot have: the server's own top-level routes (`/view/…`, `/health`,
    /// `/metrics`) and names kept for routes to come (`fonts`, `styles`, `sprites`, …). A region
    /// is served at `/ID.json` and `/ID/Z/X/Y.EXT`, so a region named like a route could be
    /// installed but never served. (`_leaflet` and `_maplibre` cannot be ids: an id starts with
    /// a letter or a digit.)
    public static let reservedRegionIDs: Set<String> = [
        "api", "favicon.ico", "fonts", "health", "index", "index.html", "metrics", "robots.txt", "sprites", "static", "styles", "view",
    ]
}
