import FoundationEssentials
import MapGateBase

/// What the App Store says about the newest published version of the app (`results[0]`).
public struct StoreRelease: Sendable, Equatable, Codable {
    public var version: String
    public var releaseNotes: String?
    /// Where the user updates (`trackViewUrl`).
    public var storeURL: String?
    /// `currentVersionReleaseDate`, missing in some real answers. Never before
    /// ``earliestDate`` (``StoreLookup`` leaves out such a date as it does a malformed one).
    public var releaseDate: Date?
    public var trackID: Int?
    public var bundleID: String?

    /// 2008-07-10T00:00:00Z, the day the App Store opened: no app was released on it before, and no
    /// HTTPS answer about one was sent before. A release date or a `Date` header earlier than this
    /// is a broken answer's, never used (one before 1970 made a record the gate could not read back).
    public static let earliestDate = Date(timeIntervalSince1970: 1_215_648_000)

    public init(
        version: String, releaseNotes: String? = nil, storeURL: String? = nil, releaseDate: Date? = nil,
        trackID: Int? = nil, bundleID: String? = nil
    ) {
        self.version = version
        self.releaseNotes = releaseNotes
        self.storeURL = storeURL
        self.releaseDate = releaseDate
        self.trackID = trackID
        self.bundleID = bundleID
    }
}

/// One good lookup: the release, and the time the server said it answered when that can be
/// trusted (an HTTPS answer's `Date` header).
public struct LookupAnswer: Sendable, Equatable {
    public var release: StoreRelease
    public var trustedTime: Date?

    public init(release: StoreRelease, trustedTime: Date? = nil) {
        self.release = release
        self.trustedTime = trustedTime
    }
}

/// A lookup that gave no usable answer. Each shape is its own case.
public enum LookupError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// `resultCount` 0: the app is not in that storefront, or the id is wrong.
    case notPublished(app: String, country: String)
    /// The service answered with an `errorMessage` body.
    case serviceError(message: String, url: String)
    /// The body is not the JSON the service sends.
    case malformed(reason: String, url: String)
    /// The service answered with an HTTP error status.
    case httpStatus(Int, url: String)
    /// The service could not be reached (timeout, no network, TLS).
    case network(String)
    /// Neither `appID` nor `bundleID` is set in the product profile or the managed policy.
    case notConfigured

    public var kind: FailureKind {
        switch self {
        case .notPublished, .serviceError, .malformed: .badData
        case .httpStatus, .network: .unavailable
        case .notConfigured: .usage
        }
    }

    public var errorDescription: String? {
        switch self {
        case .notPublished(let app, let country):
            L.localized("store lookup: %1$s is not published in storefront \"%2$s\" (resultCount 0)", "\(app)", "\(country)")
        case .serviceError(let message, let url):
            L.localized("store lookup: the service answered \"%1$s\" (%2$s)", "\(message)", "\(url)")
        case .malformed(let reason, let url):
            L.localized("store lookup: unreadable answer from %1$s: %2$s", url, reason)
        case .httpStatus(let code, let url):
            L.localized("store lookup: HTTP %1$s from %2$s", "\(code)", url)
        case .network(let message):
            L.localized("store lookup: the store cannot be reached (%1$s)", "\(message)")
        case .notConfigured:
            L.localized("store lookup: neither appID nor bundleID is set in the product profile or the managed policy")
        }
    }
}
