/// Which regions a `sync` takes: the one place that decides it, before anything is counted or
/// downloaded.
public struct SyncPlan: Sendable, Equatable {
    /// The regions to install or update, in the order asked (or installed).
    public var targets: [CatalogRegion]
    /// Installed regions the publisher no longer offers: they stay as they are.
    public var kept: [String]

    /// Nothing asked, nothing installed: nothing to do.
    public var isEmpty: Bool { targets.isEmpty && kept.isEmpty }

    /// - Parameters:
    ///   - requested: the regions named on the command line; empty means every installed one.
    ///   - installed: the ids of the installed regions.
    /// - Throws: a ``RegionError`` for a requested region the catalog does not offer, naming at
    ///   most ten of those it does.
    public init(requested: [String], installed: [String], catalog: Catalog) throws {
        if requested.isEmpty {
            kept = installed.filter { catalog.region($0) == nil }
            targets = installed.compactMap { catalog.region($0) }
            return
        }
        kept = []
        targets = try requested.map { id in
            guard let region = catalog.region(id) else {
                throw RegionError(region: id, reason: "not in the catalog (\(Self.describeOffer(catalog)))", kind: .failure)
            }
            return region
        }
    }

    static func describeOffer(_ catalog: Catalog) -> String {
        let ids = catalog.regions.map(\.id)
        if ids.isEmpty { return "it offers no region" }
        if ids.count <= 10 { return "offered: " + ids.joined(separator: ", ") }
        return "offered: " + ids.prefix(10).joined(separator: ", ") + " and \(ids.count - 10) more; see 'mapgate catalog'"
    }
}
