import MapGateBase

/// Where a region on offer stands against what is installed: the one place that decides it
/// (`mapgate catalog` shows it; `sync` refuses a region that needs a newer app by the same rule).
public enum RegionStatus: String, Sendable, Equatable {
    case notInstalled = "not-installed"
    case installed
    case updateAvailable = "update-available"
    case needsNewerApp = "needs-newer-app"

    public init(_ region: CatalogRegion, in catalog: Catalog, installedVersion: String?, app: AppVersion) {
        if catalog.requiredAppVersion(for: region, app: app) != nil {
            self = .needsNewerApp
        } else if let installedVersion {
            self = installedVersion == region.version ? .installed : .updateAvailable
        } else {
            self = .notInstalled
        }
    }
}

extension Catalog {
    /// The newer app version `region` needs (the catalog's or the region's `minimumAppVersion`,
    /// whichever is higher) when `app` is below it; nil when `app` may install it.
    public func requiredAppVersion(for region: CatalogRegion, app: AppVersion) -> AppVersion? {
        let minimums = [minimumAppVersion, region.minimumAppVersion].compactMap { $0.flatMap { try? AppVersion($0) } }
        guard let highest = minimums.max(), app < highest else { return nil }
        return highest
    }
}
