import FoundationEssentials
import MapGateBase

/// What `publish` is asked to do (see ``Publisher``).
public struct PublishOptions: Sendable, Equatable {
    /// The folder of `.mbtiles` and `.pmtiles` files and the optional `regions.json`.
    public var inputDirectory: String
    /// The static tree to write: `catalog.json`, its signature, `packages/`, `.publish/`.
    public var outputDirectory: String
    /// Absolute URL the packages are served under (`https://maps.example/offline`); package URLs
    /// are relative to the catalog without it.
    public var baseURL: String?
    /// The catalog's `publisher`.
    public var publisher: String
    /// The catalog expires this many days after it is made.
    public var expiresDays: Int
    /// The catalog's serial; by default the previous one plus 1. Giving one always writes a new
    /// catalog (a way to renew the expiry of an unchanged one).
    public var serial: Int64?
    /// How many versions of each region stay in `packages/` (the current one included).
    public var keep: Int
    /// Where `.pmtiles` inputs are converted to MBTiles for the run (the CLI passes `$TMPDIR`).
    public var temporaryDirectory = "/tmp"

    public static let defaultPublisher = "mapgate publish"
    public static let defaultExpiresDays = 30
    public static let defaultKeep = 3

    public init(
        inputDirectory: String, outputDirectory: String, baseURL: String? = nil, publisher: String = defaultPublisher,
        expiresDays: Int = defaultExpiresDays, serial: Int64? = nil, keep: Int = defaultKeep
    ) {
        self.inputDirectory = inputDirectory
        self.outputDirectory = outputDirectory
        self.baseURL = baseURL
        self.publisher = publisher
        self.expiresDays = expiresDays
        self.serial = serial
        self.keep = keep
    }

    /// The largest serial publish writes: 2^53 - 1, the largest integer every JSON reader keeps
    /// exactly (and one that leaves room for the serials after it).
    public static let maximumSerial: Int64 = (1 << 53) - 1

    /// Throws a usage error for options that cannot work.
    public func validate() throws {
        func fail(_ option: String, _ reason: String) -> PublishError { PublishError(option, reason, kind: .usage) }
        // The option and its value (not translated: what the user typed).
        guard (1...3650).contains(expiresDays) else { throw fail("--expires-days \(expiresDays)", L.localized("must be 1…3650")) }
        guard (1...100).contains(keep) else { throw fail("--keep \(keep)", L.localized("must be 1…100")) }
        if let serial, serial < 0 { throw fail("--serial \(serial)", L.localized("must not be negative")) }
        if let serial, serial > Self.maximumSerial {
            throw fail("--serial \(serial)", L.localized("must be at most %1$s (2^53 - 1, the largest integer every JSON reader keeps exactly)", "\(Self.maximumSerial)"))
        }
        guard !publisher.isEmpty else { throw fail("--publisher", L.localized("must not be empty")) }
        if let baseURL {
            // A host for http and https (found by an attack: `https://` gave `https:/packages/…`),
            // and nothing a URL must escape (a space was written as it was).
            guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https", "file"].contains(scheme),
                url.query == nil, url.fragment == nil, scheme == "file" || !(url.host ?? "").isEmpty,
                !baseURL.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
            // The option and its value (not translated: what the user typed).
            else { throw fail("--base-url \(baseURL)", L.localized("must be an absolute http, https or file URL without query or fragment")) }
            // Found by an attack: a port no client can reach (99999, 0) was signed into the catalog;
            // read from the text, as Foundation has no port for one past Int's range.
            if let port = Self.portText(of: baseURL), !(Int(port).map { (1...65535).contains($0) } ?? false) {
                // The option and its value (not translated: what the user typed).
                throw fail("--base-url \(baseURL)", L.localized("port %1$s is not one of 1…65535", port))
            }
            // Found by an attack: `https://user:password@host/` signed the password into a public catalog.
            if url.user != nil || url.password != nil || Self.authority(of: baseURL).contains("@") {
                // The option and its value (not translated: what the user typed).
                throw fail("--base-url \(baseURL)", L.localized("must not hold a user name or password: the catalog is public, and signed as it is"))
            }
        }
        // Compared as the folders they are, links followed (found by an attack: an --out that was
        // a link to the input folder put the raw inputs in the served tree).
        let input = URL(fileURLWithPath: inputDirectory).standardized.resolvingSymlinksInPath().path
        let output = URL(fileURLWithPath: outputDirectory).standardized.resolvingSymlinksInPath().path
        guard input != output else { throw fail("--out \(outputDirectory)", L.localized("must not be the input folder")) }
    }

    /// The authority of an absolute URL's text: what is between `://` and the path.
    static func authority(of url: String) -> Substring {
        guard let start = url.firstRange(of: "://")?.upperBound else { return "" }
        let rest = url[start...]
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    /// The port's digits as written in `url` (after the user information and an IPv6 host's
    /// brackets), nil when it names none.
    static func portText(of url: String) -> String? {
        var host = authority(of: url)
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if let bracket = host.lastIndex(of: "]") { host = host[host.index(after: bracket)...] }
        guard let colon = host.lastIndex(of: ":") else { return nil }
        let digits = host[host.index(after: colon)...]
        return digits.isEmpty ? nil : String(digits)
    }
}
