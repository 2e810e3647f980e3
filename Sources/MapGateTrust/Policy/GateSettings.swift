import FoundationEssentials
import MapGateBase

/// The publisher's rules for the version gate and the catalog: which app to look up where, how
/// long the grace lasts, how many prompted uses follow, which keys sign the catalog.
///
/// They come from the compiled-in ``ProductProfile``, replaced key by key by a root-owned
/// ``ManagedPolicy``, and (for `graceDays`, `maxPrompts`, `closeAfterDays` and
/// `minimumAppVersion`) by a signed catalog's `gate` object. Never from the user's configuration.
public struct GateSettings: Sendable, Equatable {
    /// The App Store id (`trackId`) of the app, looked up as `?id=`.
    public var appID: Int?
    /// The bundle id, looked up as `?bundleId=` when `appID` is not set; also checked in answers.
    public var bundleID: String?
    /// The two-letter storefront code.
    public var country: String
    /// The iTunes Lookup endpoint.
    public var lookupURL: String
    /// A CA bundle for the lookup only (a deployment's own store mirror, the tests' HTTPS origin).
    public var lookupCAFile: String?
    /// Days after a newer version is released (or first seen, if earlier) before prompts start.
    public var graceDays: Int
    /// Prompted uses after the grace period before the gate closes.
    public var maxPrompts: Int
    /// Hours between store lookups on ordinary runs; at most 24.
    public var checkIntervalHours: Double
    /// Days after the grace period when the gate closes whatever the count (nil: never).
    public var closeAfterDays: Int?
    /// The publisher's catalog (a user's configuration may name a mirror).
    public var catalogURL: String?
    /// minisign public keys (`RW…`) trusted to sign the catalog.
    public var trustedKeys: [String]
    /// Refuse an unsigned catalog (a managed policy may turn this off for a private deployment).
    public var requireSignedCatalog: Bool
    /// Let a managed policy's `lookupURL` be plain HTTP (a deployment's own mirror on a trusted
    /// network, the tests' origin). Without it an `http:` lookup URL is refused when the policy
    /// loads: an answer over plain HTTP can be forged by anyone on the path.
    public var allowInsecureLookup: Bool
    /// Send the lookup through the proxy that `http_proxy`/`https_proxy` name. Off unless a
    /// managed policy turns it on: the user's own proxy must not answer for the store.
    public var lookupUsesProxy: Bool
    /// The catalog keys (`RW…`) whose signed `gate` rules may loosen these settings; nil: every
    /// key of ``trustedKeys``. A key an unsigned managed policy adds is trusted for the catalog
    /// (its map data) but its catalogs' `gate` rules may only make the gate stricter.
    public var gateRuleKeys: [String]?
    /// Who keeps the gate's record and the maps: each user (``MachineMode/perUser``, the default)
    /// or the machine's system service (``MachineMode/system``, issue 36), which the commands then
    /// ask over ``systemSocket``. A policy may turn system mode on unsigned: it only tightens.
    public var mode: MachineMode = .perUser
    /// The system service's socket (system mode).
    public var systemSocket: String = "/run/mapgate/system.sock"
    /// The port of the machine's one tile server in system mode (on 127.0.0.1), which every
    /// `serve` and `open` prints.
    public var systemTilePort: UInt16 = 8080
    /// The user the system service runs as, by name or number: a process of that user is the
    /// service (it runs commands itself); every other asks it.
    public var systemUser: String = "_mapgate"
    /// The system service's catalog credentials (``CatalogCredentials``); used only by the service.
    public var credentialsFile: String = "/etc/mapgate/credentials"
    /// The machines (`/etc/machine-id`) the managed policy is for; nil: any (issue 35, item 7).
    public var policyMachines: [String]?
    /// When the managed policy stops being valid; nil: never.
    public var policyExpires: Date?
    /// Whether these settings come from a managed policy with a valid signature by a publisher's
    /// policy key: only such a policy may relax the gate rules an unsigned one made stricter
    /// (the record keeps those, ``GateRecord/strictestRules``).
    public var managedPolicySigned = false
    /// Days a gate record with map data installed may go without one successful store lookup,
    /// counted from its first use; then the next use needs one first, as a recovering record's
    /// does (issue 35, item 8: a record made afresh offline is otherwise open for ever). Nil: no limit.
    public var firstLookupDays: Int? = ProductProfile.firstLookupDays

    public init(
        appID: Int? = nil, bundleID: String? = nil, country: String = "us", lookupURL: String = "https://itunes.apple.com/lookup",
        lookupCAFile: String? = nil, graceDays: Int = ProductProfile.graceDays, maxPrompts: Int = ProductProfile.maxPrompts, checkIntervalHours: Double = 24,
        closeAfterDays: Int? = nil, catalogURL: String? = nil, trustedKeys: [String] = [], requireSignedCatalog: Bool = true,
        allowInsecureLookup: Bool = false, lookupUsesProxy: Bool = false
    ) {
        self.appID = appID
        self.bundleID = bundleID
        self.country = country
        self.lookupURL = lookupURL
        self.lookupCAFile = lookupCAFile
        self.graceDays = graceDays
        self.maxPrompts = maxPrompts
        self.checkIntervalHours = min(checkIntervalHours, Self.maximumCheckIntervalHours)
        self.closeAfterDays = closeAfterDays
        self.catalogURL = catalogURL
        self.trustedKeys = trustedKeys
        self.requireSignedCatalog = requireSignedCatalog
        self.allowInsecureLookup = allowInsecureLookup
        self.lookupUsesProxy = lookupUsesProxy
    }

    /// No source may make lookups rarer than daily.
    public static let maximumCheckIntervalHours: Double = 24

    /// Every key a managed policy may set, with its type and meaning, for `--help` and docs/configuration.md.
    public static let keys: [(name: String, type: String, summary: String)] = [
        ("appID", "integer", L.localized("App Store id of the app (looked up as ?id=)")),
        ("bundleID", "string", L.localized("bundle id of the app (looked up as ?bundleId= when appID is unset; checked in answers)")),
        ("country", "string", L.localized("two-letter storefront code")),
        ("lookupURL", "string", L.localized("iTunes Lookup endpoint (https; http only with allowInsecureLookup)")),
        ("lookupCAFile", "string", L.localized("PEM CA bundle for the lookup only")),
        ("graceDays", "integer", L.localized("days after a newer version is released before prompts start (0-365)")),
        ("maxPrompts", "integer", L.localized("prompted uses before the gate closes (0-100)")),
        ("checkIntervalHours", "number", L.localized("hours between store lookups on ordinary runs (0-24)")),
        ("closeAfterDays", "integer", L.localized("days after the grace period when the gate closes whatever the count")),
        ("firstLookupDays", "integer", L.localized("days installed maps may be used before mapgate has reached the App Store once")),
        ("catalogURL", "string", L.localized("the publisher's region catalog (http, https or file)")),
        ("trustedKeys", "list", L.localized("minisign public keys (RW…) trusted to sign the catalog")),
        ("requireSignedCatalog", "boolean", L.localized("refuse catalogs without a valid signature (default true)")),
        ("allowInsecureLookup", "boolean", L.localized("let lookupURL be plain http (default false)")),
        ("lookupUsesProxy", "boolean", L.localized("send the lookup through http_proxy/https_proxy (default false: never a proxy)")),
        ("mode", "string", L.localized("\"system\": the machine's system service keeps the gate and the maps (default \"per-user\")")),
        ("systemSocket", "string", L.localized("the system service's socket (default /run/mapgate/system.sock)")),
        ("systemTilePort", "integer", L.localized("the port of the machine's tile server on 127.0.0.1 in system mode (default 8080)")),
        ("systemUser", "string", L.localized("the user the system service runs as (default _mapgate)")),
        ("machines", "list", L.localized("the machines (their /etc/machine-id) this policy is for; on any other it is refused")),
        ("expires", "string", L.localized("ISO 8601 time after which this policy is refused")),
        ("credentialsFile", "string", L.localized("what the system service sends with catalog and package requests (default /etc/mapgate/credentials)")),
    ]
}

/// Who keeps the gate's record and the maps on this machine (``GateSettings/mode``).
public enum MachineMode: String, Sendable, Equatable {
    case perUser = "per-user"
    case system
}
