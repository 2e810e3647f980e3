/// The product's gate rules, compiled into the binary. A build for another app changes this file
/// and nothing else.
///
/// mapgate is the command-line tool of the "mapgate Offline Maps" app: App Store id 6450000001,
/// bundle id `app.mapgate.offline`, looked up in the US storefront of the public iTunes Lookup
/// service. A deployment (or a test) replaces values with a root-owned ``ManagedPolicy``.
public enum ProductProfile {
    public static let settings = GateSettings(
        appID: 6_450_000_001,
        bundleID: "app.mapgate.offline",
        country: "us",
        lookupURL: "https://itunes.apple.com/lookup",
        graceDays: 30,
        maxPrompts: 5,
        checkIntervalHours: 24,
        closeAfterDays: nil,
        catalogURL: "https://maps.mapgate.app/catalog.json",
        trustedKeys: [],
        requireSignedCatalog: true)
}
