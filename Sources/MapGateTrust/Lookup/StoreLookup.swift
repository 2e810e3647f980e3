import FoundationEssentials
import MapGateBase

/// Asks the App Store lookup service (iTunes Lookup JSON) for the app's newest version.
public struct StoreLookup: Sendable {
    public var client: HTTPClient
    public var endpoint: String
    public var appID: Int?
    public var bundleID: String?
    public var country: String
    /// Seconds to connect; ordinary runs use a short one so an offline run is not held up.
    public var connectTimeout: Double
    public var totalTimeout: Double

    public init(
        client: HTTPClient, endpoint: String, appID: Int?, bundleID: String?, country: String,
        connectTimeout: Double = 3, totalTimeout: Double = 10
    ) {
        self.client = client
        self.endpoint = endpoint
        self.appID = appID
        self.bundleID = bundleID
        self.country = country
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
    }

    /// The lookup the publisher's rules describe. Its client trusts the system CA bundle, or the
    /// policy's `lookupCAFile`: never the user's `caFile`.
    /// Proxies apply only when the policy says `lookupUsesProxy`; a redirect never leaves HTTPS.
    public init(settings: GateSettings, connectTimeout: Double = 3) {
        var client = HTTPClient(caFile: settings.lookupCAFile)
        client.usesProxies = settings.lookupUsesProxy
        client.allowsDowngrade = false
        self.init(
            client: client, endpoint: settings.lookupURL, appID: settings.appID,
            bundleID: settings.bundleID, country: settings.country, connectTimeout: connectTimeout)
    }

    /// The request URL: the app, the storefront and a cache-busting parameter (the live service
    /// caches answers for about a day).
    public func requestURL(cacheBuster: String) throws -> String {
        var query: [String] = []
        if let appID {
            query.append("id=\(appID)")
        } else if let bundleID {
            query.append("bundleId=\(bundleID.percentEncoded(allowing: { $0.isAlphanumeric || ".-_".unicodeScalars.contains($0) }))")
        } else {
            throw LookupError.notConfigured
        }
        query.append("country=\(country)")
        query.append("_=\(cacheBuster)")
        let separator = endpoint.contains("?") ? "&" : "?"
        return endpoint + separator + query.joined(separator: "&")
    }

    private var appDescription: String {
        if let appID { return L.localized("app id %1$s", "\(appID)") }
        return L.localized("bundle id %1$s", bundleID ?? "?")
    }

    /// Looks up now. Throws a ``LookupError`` for each way it can fail.
    public func fetch(cacheBuster: String = String(UInt64.random(in: 0...UInt64.max), radix: 36)) throws -> LookupAnswer {
        let url = try requestURL(cacheBuster: cacheBuster)
        let request = HTTPRequest(
            url: url, headers: [("Cache-Control", "no-cache"), ("Accept", "application/json")],
            connectTimeout: connectTimeout, totalTimeout: totalTimeout, lowSpeedTime: 5)
        let response: HTTPResponse
        do {
            response = try client.get(request, maxBodyBytes: 4 << 20)
        } catch HTTPError.tooLarge(let limit, _) {
            // The store was reached: its answer is no lookup answer (65), as a malformed one.
            throw LookupError.malformed(reason: L.localized("the answer is larger than %1$s", ByteCount.text(Int64(limit))), url: endpoint)
        } catch let error as HTTPError {
            // The transport's own words stay English (libcurl's); the sentence around them is
            // translated when it is shown (LookupError.errorDescription).
            throw LookupError.network(Localization.inEnglish { errorMessage(error) })
        }
        guard (200..<300).contains(response.status) else {
            if let message = try? Self.serviceMessage(in: response.body) {
                throw LookupError.serviceError(message: message, url: endpoint)
            }
            throw LookupError.httpStatus(response.status, url: endpoint)
        }
        // A web page in the lookup's place is a network's login page (a captive portal), not an
        // answer the store gave: said as the network's, 69 (found by an attack: "unreadable
        // answer: the body is not a JSON object", 65, in English inside the user's language).
        if CatalogSource.looksLikeHTML(response.body) {
            throw LookupError.network(
                L.localized("the answer was a web page (HTML), not the store's: if this network asks you to sign in (a Wi-Fi login page), sign in and try again"))
        }
        let release = try decode(response.body)
        // Only an answer that came over verified TLS may set the gate's clock.
        let isTLS = URL(string: response.head.effectiveURL)?.scheme?.lowercased() == "https"
        let trustedTime = isTLS ? response.header("Date").flatMap(HTTPDate.parse).flatMap(Self.plausible).map { $0 + Self.age(response.header("Age")) } : nil
        return LookupAnswer(release: release, trustedTime: trustedTime)
    }

    /// Reads a lookup answer. Public so the saved last answer and fixtures go through one parser.
    public func decode(_ body: Data) throws -> StoreRelease {
        guard let object = (try? JSONValue(parsing: body))?.objectValue else {
            throw LookupError.malformed(reason: L.localized("the body is not a JSON object"), url: endpoint)
        }
        if let message = object["errorMessage"]?.stringValue {
            throw LookupError.serviceError(message: message, url: endpoint)
        }
        guard let count = object["resultCount"]?.int, let results = object["results"]?.arrayValue else {
            throw LookupError.malformed(reason: L.localized("no resultCount and results"), url: endpoint)
        }
        guard count > 0, let first = results.first else {
            throw LookupError.notPublished(app: appDescription, country: country)
        }
        guard let result = first.objectValue else {
            throw LookupError.malformed(reason: L.localized("results[0] is not an object"), url: endpoint)
        }
        guard let version = result["version"]?.stringValue else {
            throw LookupError.malformed(reason: L.localized("results[0] has no version"), url: endpoint)
        }
        // An App Store version is one to three dotted numbers; one of a page's length is no
        // version, and would be kept and printed whole by every prompt.
        guard version.count <= Self.maximumVersionLength else {
            throw LookupError.malformed(
                reason: L.localized("version \"%1$s…\" is longer than %2$s characters", "\(version.prefix(Self.maximumVersionLength))", "\(Self.maximumVersionLength)"),
                url: endpoint)
        }
        do {
            _ = try AppVersion(version)
        } catch {
            throw LookupError.malformed(reason: L.localized("version \"%1$s\" is not a version number", "\(version)"), url: endpoint)
        }
        let trackID = result["trackId"]?.int
        let bundleID = result["bundleId"]?.stringValue
        // An answer about another app (a wrong or hostile endpoint) must not move the gate.
        if let appID, trackID != appID {
            throw LookupError.malformed(reason: L.localized("the answer is for trackId %1$s, not app id %2$s", "\(trackID.map(String.init) ?? "none")", "\(appID)"), url: endpoint)
        }
        if appID == nil, let expected = self.bundleID, bundleID != expected {
            throw LookupError.malformed(reason: L.localized("the answer is for bundleId %1$s, not %2$s", "\(bundleID ?? "none")", "\(expected)"), url: endpoint)
        }
        return StoreRelease(
            version: version.trimmingWhitespaceAndNewlines(),
            releaseNotes: result["releaseNotes"]?.stringValue,
            storeURL: result["trackViewUrl"]?.stringValue,
            releaseDate: result["currentVersionReleaseDate"]?.stringValue.flatMap(ISODate.parse).flatMap(Self.plausible),
            trackID: trackID,
            bundleID: bundleID)
    }

    /// The longest version text taken from the store.
    static let maximumVersionLength = 64

    /// A date an answer may carry: none before the App Store opened (``StoreRelease/earliestDate``).
    /// Seconds an `Age` header says a cache kept the answer (RFC 9111 §5.1): its `Date` is when
    /// the answer was made, so the time is `Date` plus that (found by an attack: a cached answer's
    /// `Date` days old pulled the gate's clock back as far). 0 without one, or for one that is not
    /// a number; at most a day: it is a cache's word, not the store's, and a cache saying it kept
    /// the answer a year (`Age: 31536000`) moved the gate's clock a year ahead and charged an honest
    /// user in the grace (found by an attack). A cache that works keeps a store's answer for
    /// minutes or hours; one kept longer pulls the clock back by what is over a day.
    static func age(_ header: String?) -> TimeInterval {
        guard let header, let seconds = UInt64(header.filter { $0 != " " && $0 != "\t" }) else { return 0 }
        return TimeInterval(min(seconds, maximumAge))
    }

    /// The most an `Age` header counts for: a day.
    static let maximumAge: UInt64 = 86_400

    private static func plausible(_ date: Date) -> Date? {
        date >= StoreRelease.earliestDate ? date : nil
    }

    private static func serviceMessage(in body: Data) throws -> String? {
        try JSONValue(parsing: body)["errorMessage"]?.stringValue
    }
}
