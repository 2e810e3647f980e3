/// The product's gate rules, compiled into the binary. A build for another app changes this file
/// and nothing else.
///
/// mapgate is the command-line tool of the "mapgate Offline Maps" app: App Store id 6450000001,
/// bundle id `app.mapgate.offline`, looked up in the US storefront of the public iTunes Lookup
/// service. A deployment replaces values with a root-owned ``ManagedPolicy``: one that only makes
/// the rules stricter as it is, one that loosens them only when signed with a key of
/// ``policyKeys`` (docs/decisions/signed-policy.md).
public enum ProductProfile {
    /// Days after a newer version's release before the prompts start: the one place this number is written.
    public static let graceDays = 30
    /// Prompted uses after the grace before the gate closes: the one place this number is written.
    public static let maxPrompts = 5
    /// Days a gate record with map data installed may go without ever reaching the store
    /// (``GateSettings/firstLookupDays``).
    public static let firstLookupDays = 90

    /// minisign public keys (`RW…`) whose signature (`policy.json.minisig`) lets a managed policy
    /// loosen the profile: another store, storefront or lookup URL, more grace days or prompts,
    /// other catalog keys. The publisher's own key goes here when the product is built; this
    /// source trusts none in a release build, so no policy can loosen it. Debug builds (the
    /// tests') also trust the test key `Fixtures/keys/test-policy.pub`, whose secret key is in
    /// the repository: the test suite's lookups on 127.0.0.1 need a loosened policy. A test of
    /// the Debian package checks that its binary refuses a policy signed with that key.
    /// The benchmarks' release builds (`-Xswiftc -DMAPGATE_BENCHMARK`, bench/bench-env.sh) trust
    /// it too, for their lookups on 127.0.0.1; the package's build (scripts/package) does not.
    #if DEBUG || MAPGATE_BENCHMARK
    public static let policyKeys = ["RWQ2lPOEDhpOnXl+nwg6Nbrac1DQHZ9NC1i+0JYJNixIcn27fTIB88OA"]
    #else
    public static let policyKeys: [String] = []
    #endif

    public static let settings = GateSettings(
        appID: 6_450_000_001,
        bundleID: "app.mapgate.offline",
        country: "us",
        lookupURL: "https://itunes.apple.com/lookup",
        graceDays: graceDays,
        maxPrompts: maxPrompts,
        checkIntervalHours: 24,
        closeAfterDays: nil,
        catalogURL: "https://maps.mapgate.app/catalog.json",
        trustedKeys: [],
        requireSignedCatalog: true)
}
