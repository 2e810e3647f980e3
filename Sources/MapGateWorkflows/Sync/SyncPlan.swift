import MapGateBase
import MapGateTrust

/// Which regions a `sync` takes: the one place that decides it, before anything is counted or
/// downloaded.
public struct SyncPlan: Sendable, Equatable {
    /// The regions to install or update, in the order asked (or installed).
    public var targets: [CatalogRegion]
    /// Installed regions the publisher no longer offers: they stay as they are.
    public var kept: [String]
    /// Regions asked for (or installed) whose catalog entry is invalid: each fails with the
    /// entry's reason (exit 65), the others go on.
    public var refused: [CatalogError]
    /// Installed regions the catalog offers but the place it was read from does not carry (a
    /// mirror with only some regions), each with the reason: they stay as they are.
    public var absent: [Absent] = []
    /// Regions asked for by name that the place the catalog was read from does not carry (a
    /// mirror without them): each fails (exit 69), the others go on, as a package the publisher
    /// does not serve fails only its region (found by an attack: one such name installed nothing).
    public var unavailable: [Absent] = []

    public struct Absent: Sendable, Equatable {
        public var id: String
        public var reason: String
    }

    /// Nothing asked, nothing installed: nothing to do.
    public var isEmpty: Bool { targets.isEmpty && kept.isEmpty && refused.isEmpty && absent.isEmpty && unavailable.isEmpty }


    /// - Parameters:
    ///   - requested: the regions named on the command line (``RegionArgument``: an id however
    ///     typed, or a region's name in the catalog; one given twice counts once); empty means
    ///     every installed one.
    ///   - installed: the ids of the installed regions.
    /// - Throws: a ``RegionError`` for a requested region the catalog does not offer, naming at
    ///   most ten of those it does.
    public init(requested: [String], installed: [String], catalog: Catalog) throws {
        if requested.isEmpty {
            refused = installed.compactMap { catalog.rejection(of: $0) }
            kept = installed.filter { catalog.region($0) == nil && catalog.rejection(of: $0) == nil && catalog.absent[$0] == nil }
            absent = installed.compactMap { id in catalog.absent[id].map { Absent(id: id, reason: $0) } }
            targets = installed.compactMap { catalog.region($0) }
            return
        }
        kept = []
        var refused: [CatalogError] = []
        var targets: [CatalogRegion] = []
        var seen = Set<String>()
        let named = catalog.regions.map { (id: $0.id, name: $0.name) } + catalog.absentNames.map { (id: $0.key, name: $0.value) }
        for typed in requested {
            let argument = RegionArgument(typed)
            let id = try argument.id(among: named) ?? typed
            guard seen.insert(id).inserted else { continue }
            if let region = catalog.region(id) {
                targets.append(region)
            } else if let rejection = catalog.rejection(of: id) {
                refused.append(rejection)
            } else if let reason = catalog.absent[id] {
                unavailable.append(Absent(id: id, reason: reason))
            } else {
                throw RegionError(region: id, reason: L.localized("not in the catalog (%1$s)", "\(Self.describeOffer(catalog))"), kind: .failure)
            }
        }
        self.targets = targets
        self.refused = refused
    }

    /// Installed regions the catalog offers in another version stay as they are, each ``absent``
    /// for `reason` (the catalog is older than one already accepted: it must not put an older
    /// version back).
    public mutating func holdBack(installed versions: [String: String], reason: String) {
        func changes(_ region: CatalogRegion) -> Bool { versions[region.id].map { $0 != region.version } ?? false }
        absent += targets.filter(changes).map { Absent(id: $0.id, reason: reason) }
        targets.removeAll(where: changes)
    }

    static func describeOffer(_ catalog: Catalog) -> String {
        let ids = catalog.regions.map(\.id)
        if ids.isEmpty { return L.localized("it offers no region") }
        let list = ids.prefix(10).joined(separator: L.localized(", "))
        if ids.count <= 10 { return L.localized("offered: %1$s", list) }
        return L.localized("offered: %1$s and %2$s more; see 'mapgate catalog'", list, "\(ids.count - 10)")
    }
}
