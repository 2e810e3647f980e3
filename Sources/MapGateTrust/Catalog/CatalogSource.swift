import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// Where the catalog comes from and how it is trusted: fetched with its detached minisign
/// signature (`<url>.minisig`), verified against the publisher's keys before anything else is
/// read from it.
public struct CatalogSource: Sendable {
    public var url: String
    /// minisign public keys (`RW…`) from the product profile and the managed policy.
    public var trustedKeys: [String]
    /// False only where a managed policy allows unsigned catalogs (a private deployment).
    public var requiresSignature: Bool
    public var client: HTTPClient

    /// A catalog over 16 MiB is refused: no real catalog comes near it.
    public static let maximumBytes = 16 << 20

    public init(url: String, trustedKeys: [String], requiresSignature: Bool, client: HTTPClient) {
        self.url = url
        self.trustedKeys = trustedKeys
        self.requiresSignature = requiresSignature
        self.client = client
    }

    /// A catalog as fetched: its parsed form, the SHA-256 of its exact bytes, and who signed it.
    public struct Fetched: Sendable {
        public var catalog: Catalog
        public var sha256: String
        /// Nil when unsigned (allowed only when the policy says so).
        public var signature: MinisignVerification?
        /// The catalog's bytes and its `.minisig` file exactly as fetched, to be saved and
        /// passed on (``SavedCatalog``); no signature file for an unsigned catalog.
        public var bytes: Data
        public var signatureFile: Data?
    }

    /// Fetches, verifies and parses the catalog. A missing, bad or unknown signature is refused
    /// before anything is parsed or downloaded (exit 65). Where the policy lets catalogs go
    /// unsigned (`requireSignedCatalog: false`) a missing signature is accepted, but one that is
    /// there is still checked against the trusted keys: a bad signature is never ignored.
    ///
    /// A signature by a trusted key that does not match the catalog's bytes is asked for once
    /// more, with the catalog, after ``publishWindow``: a publisher replaces the two files one
    /// after the other (`mapgate publish` writes the signature, then the catalog), and a client
    /// that fetched between the two renames got a pair that belongs to no publish.
    ///
    /// That second fetch takes the catalog in one answer, never joined from parts: a catalog cut
    /// off and taken up where it stopped may have been given the wrong bytes for a part (a proxy
    /// or server that answers a range with other bytes), and is then refused for what went wrong
    /// (found by an attack: a spliced catalog was refused as "changed after signing").
    public func fetch() throws -> Fetched {
        do {
            return try fetchOnce(fresh: false)
        } catch let mismatch as SignatureMismatch {
            usleep(UInt32(publishWindow * 1_000_000))
            do {
                return try fetchOnce(fresh: true)
            } catch is SignatureMismatch {
                throw mismatch.error
            }
        }
    }

    /// How long a client waits before fetching a catalog and signature that did not match again.
    public var publishWindow: Double = 1

    /// A trusted key's signature that does not match the bytes (``fetch()`` tries once more).
    private struct SignatureMismatch: Error {
        let error: CatalogError
    }

    /// - Parameter fresh: the second try of a catalog and signature that did not match: each is
    ///   asked for whole, and of the publisher itself (`Cache-Control: no-cache`: a cache between
    ///   must ask the publisher again; found by an attack, a cache that held the catalog of
    ///   before a publish beside the signature of after it refused every run until it let go).
    private func fetchOnce(fresh: Bool) throws -> Fetched {
        let (bytes, foundAt) = try get(url, limit: Self.maximumBytes, what: L.localized("catalog"), fresh: fresh)
        var verified: (verification: MinisignVerification, file: Data)?
        if requiresSignature || !trustedKeys.isEmpty {
            verified = try verify(bytes, foundAt: foundAt, fresh: fresh)
        }
        // Relative URLs are resolved against where the catalog was found, after redirects (RFC
        // 3986 5.1.3: a catalog moved to a CDN with its packages beside it; found by an attack:
        // they were asked for at the first URL's host, 404); the catalog is still named by its URL.
        let base = Self.base(asked: url, foundAt: foundAt)
        // Named by the URL asked for in every message, whatever the base (found by an attack: a
        // region refused in a redirected catalog was said of the redirect's URL).
        func named(_ error: CatalogError) -> CatalogError { CatalogError(source: error.source == base ? url : error.source, region: error.region, reason: error.reason) }
        var catalog: Catalog
        do {
            catalog = try Catalog.parse(bytes, sourceURL: base)
        } catch let error as CatalogError {
            throw named(error)
        }
        catalog.sourceURL = url
        catalog.rejected = catalog.rejected.map(named)
        catalog.rejectedStyles = catalog.rejectedStyles.map(named)
        return Fetched(
            catalog: catalog, sha256: try SHA256Hasher.hex(of: bytes), signature: verified?.verification,
            bytes: bytes, signatureFile: verified?.file)
    }

    /// Fetches a small file beside the catalog (a mirror's manifest), with the same client.
    public func fetchFile(_ target: String, limit: Int, what: String) throws -> Data {
        try get(target, limit: limit, what: what).body
    }

    /// ``fetchFile(_:limit:what:)``, or nil when the file is not there at all (HTTP 404 or 410, a
    /// `file:` path that does not exist); every other failure throws.
    public func fetchFileIfPresent(_ target: String, limit: Int, what: String) throws -> Data? {
        do {
            return try fetchFile(target, limit: limit, what: what)
        } catch let error as CatalogFetchError where error.isAbsent {
            return nil
        }
    }

    /// The URL relative package URLs are resolved against: where the catalog was found, but never
    /// a step down from https to http (packages would go in the clear; found by an attack), and
    /// without a user name or password a redirect put there (they would be in every package's
    /// URL, its messages and its records).
    package static func base(asked: String, foundAt: String) -> String {
        guard var found = URLComponents(string: foundAt) else { return asked }
        if asked.lowercased().hasPrefix("https:"), found.scheme?.lowercased() != "https" { return asked }
        if found.user != nil || found.password != nil {
            found.user = nil
            found.password = nil
        }
        return found.string ?? asked
    }

    /// Where the signature of the catalog at `url` lies: `.minisig` added to the URL's path, its
    /// query kept and its fragment dropped (found by an attack: `catalog.json?v=2` gave
    /// `catalog.json?v=2.minisig`, which a server answers with the catalog, refused as tampering).
    public static func signatureURL(of url: String) -> String {
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? url
        guard let query = withoutFragment.firstIndex(of: "?") else { return withoutFragment + ".minisig" }
        return withoutFragment[..<query] + ".minisig" + withoutFragment[query...]
    }

    /// The signature is asked for beside the catalog's URL, and when it is not there, beside where
    /// a redirect found the catalog (found by an attack: a catalog moved to a CDN with its
    /// signature, the old place redirecting the catalog only, was refused as unsigned).
    private func verify(_ bytes: Data, foundAt: String, fresh: Bool) throws -> (verification: MinisignVerification, file: Data)? {
        let keys: [MinisignPublicKey]
        do {
            keys = try trustedKeys.map { try MinisignPublicKey(text: $0) }
        } catch {
            throw CatalogError(source: url, region: nil, reason: L.localized("a trusted key is not a minisign public key: %1$s", "\(errorMessage(error))"))
        }
        guard !keys.isEmpty else {
            throw CatalogError(
                source: url, region: nil,
                reason: L.localized("signed catalogs are required but no trusted key is set (trustedKeys in the product profile or the managed policy)"))
        }
        let signatureURL = Self.signatureURL(of: url)
        let signature: Data
        do {
            signature = try get(signatureURL, limit: MinisignSignature.maximumFileSize, what: L.localized("signature"), fresh: fresh).body
        } catch let error as CatalogFetchError where error.isMissing {
            let beside = Self.signatureURL(of: Self.base(asked: url, foundAt: foundAt))
            if beside != signatureURL, let found = try? get(beside, limit: MinisignSignature.maximumFileSize, what: L.localized("signature"), fresh: fresh).body {
                signature = found
            } else {
                if !requiresSignature { return nil }
                throw CatalogError(source: url, region: nil, reason: L.localized("no signature at %1$s (%2$s): refusing an unsigned catalog", "\(signatureURL)", "\(error.detail)"))
            }
        }
        do {
            return (try MinisignVerifier(trustedKeys: keys).verify(signatureFile: signature, message: bytes), signature)
        } catch let error as SignatureError {
            let refused = CatalogError(source: url, region: nil, reason: L.localized("signature refused: %1$s", "\(errorMessage(error))"))
            if case .messageMismatch = error { throw SignatureMismatch(error: refused) }
            throw refused
        }
    }

    /// The pauses between tries of a catalog's or signature's request that failed once a server
    /// had answered (a cut connection, a 5xx): 4 tries in all, as for packages (found by an
    /// attack: one dropped connection failed the run on a poor network); a try that brought bytes
    /// before it was cut costs none (``get(_:limit:what:)``). Failures before any
    /// answer (no network, no name server, a refused connection) and timeouts are said at once:
    /// an offline machine is not kept waiting, and a stalled server by ``stallSeconds``.
    public var retryDelays: [Double] = [1, 2, 4]

    /// A catalog or signature that comes slower than ``stallBytesPerSecond`` for this long fails
    /// as stalled. There is no cap on the whole transfer: a catalog of a few hundred KB over a
    /// link of 2 KB/s takes minutes, and failed every run at the 60 s it once had (found by an
    /// attack on sync over a poor network: exit 69 with 119,800 of 154,209 bytes received).
    public var stallSeconds = 30
    public var stallBytesPerSecond = 256

    /// The body, and the URL it came from after redirects. A try that was cut off after it
    /// brought bytes is taken up where it stopped (a `Range` request, `If-Range` on the answer's
    /// strong ETag), and costs none of the tries (found by an attack: a link that dropped every
    /// 60 KB fetched a 154 KB catalog from its start four times, and failed); at most
    /// ``maximumTries`` in all. Unless `fresh`: then each try asks for the whole file, of the
    /// origin (``fetchOnce(fresh:)``).
    private func get(_ target: String, limit: Int, what: String, fresh: Bool = false) throws -> (body: Data, url: String) {
        var delays = retryDelays[...]
        var partial: PartialBody?
        for _ in 1...Self.maximumTries {
            let before = partial?.body.count ?? 0
            do {
                return try getOnce(target, limit: limit, what: what, partial: &partial, fresh: fresh)
            } catch let error as RetryableFetch {
                if fresh { partial = nil }
                if (partial?.body.count ?? 0) > before { continue }
                guard let delay = delays.popFirst() else { throw error.failure }
                usleep(UInt32(delay * 1_000_000))
            }
        }
        throw GeneralFailure(
            L.localized("%1$s %2$s: the connection was cut off %3$s times", what, target, "\(Self.maximumTries)"), kind: .unavailable)
    }

    /// Tries of one file, those that brought bytes included.
    static let maximumTries = 64

    /// What a try cut off brought, and the validator to ask for the rest with.
    private struct PartialBody {
        var body: Data
        var validator: String
    }

    /// A failure another try may mend, with what to say if none does.
    private struct RetryableFetch: Error {
        let failure: any Error
    }

    /// One try over http(s), streamed: what it brings is kept in `partial` when it is cut off
    /// and the answer had a validator; a try with `partial` asks for the rest.
    private func stream(_ target: String, limit: Int, partial: inout PartialBody?, fresh: Bool) throws -> Answer {
        let offset = partial?.body.count ?? 0
        let headers = (partial.map { [("Range", "bytes=\($0.body.count)-"), ("If-Range", $0.validator)] } ?? [])
            + (fresh ? [("Cache-Control", "no-cache"), ("Pragma", "no-cache")] : [])
        let request = HTTPRequest(
            url: target, headers: headers, connectTimeout: 10, totalTimeout: nil, lowSpeedLimit: stallBytesPerSecond, lowSpeedTime: stallSeconds)
        var body = Data()
        var validator: String?
        var isWhole = false
        let kept = partial
        do {
            let head = try client.stream(
                request,
                onHead: { head in
                    if head.status == 206, let kept, head.header("Content-Range")?.hasPrefix("bytes \(offset)-") == true {
                        body = kept.body
                        validator = kept.validator
                        isWhole = true
                    } else {
                        // The whole file (the server ignored the range, or the file changed), or
                        // an answer that is not the file: nothing kept applies to it.
                        body = Data()
                        isWhole = head.status == 200
                        // A strong ETag only: a date is no proof that two versions written within
                        // its second differ (found by an attack: an unsigned catalog was taken
                        // spliced from two versions).
                        validator = HTTPValidator.entityTag(head.header("ETag")).flatMap { $0.hasPrefix("W/") ? nil : $0 }
                        // Said at once, not after minutes of a slow link.
                        if isWhole, let length = head.header("Content-Length").flatMap({ Int($0) }), length > limit {
                            throw HTTPError.tooLarge(limit: limit, url: target)
                        }
                    }
                }
            ) { chunk in
                guard body.count + chunk.count <= limit else { throw HTTPError.tooLarge(limit: limit, url: target) }
                body.append(contentsOf: chunk)
            }
            partial = nil
            // A part not asked for, or of another place (416: the file is shorter now): tried
            // again from the start.
            if head.status == 206 && !isWhole || head.status == 416 && kept != nil {
                throw HTTPError.transport(code: 18, message: L.localized("the server answered with another part of the file"), url: target)
            }
            return Answer(status: isWhole ? 200 : head.status, body: body, effectiveURL: head.effectiveURL)
        } catch {
            partial = isWhole && !body.isEmpty ? validator.map { PartialBody(body: body, validator: $0) } : nil
            throw error
        }
    }

    /// An answer's status (0 for a `file://` file), body and the URL it came from.
    private struct Answer {
        var status: Int
        var body: Data
        var effectiveURL: String
    }

    private func getOnce(_ target: String, limit: Int, what: String, partial: inout PartialBody?, fresh: Bool = false) throws -> (body: Data, url: String) {
        let response: Answer
        do {
            if target.lowercased().hasPrefix("file:") {
                let read = try client.get(HTTPRequest(url: target, connectTimeout: 10, totalTimeout: nil), maxBodyBytes: limit)
                response = Answer(status: read.status, body: read.body, effectiveURL: read.head.effectiveURL)
            } else {
                response = try stream(target, limit: limit, partial: &partial, fresh: fresh)
            }
        } catch let error as HTTPError {
            if case .tooLarge = error {
                let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes"
                // A file beside the catalog (a mirror's manifest) is named itself, not the catalog
                // (found by an attack: an oversized mirror.json was blamed on catalog.json).
                guard target == url || target == Self.signatureURL(of: url) else {
                    throw GeneralFailure(L.localized("%1$s %2$s: larger than %3$s: refused", "\(what)", Self.shown(target), "\(size)"), kind: .badData)
                }
                throw CatalogError(source: url, region: nil, reason: L.localized("%1$s larger than %2$s: refused", "\(what)", "\(size)"))
            }
            // A file:// file that does not exist (or cannot be opened) is curl error 37. libcurl's
            // words are English in every language ("Couldn't open file …"): the system's reason is
            // said instead, and a local file that cannot be read is I/O (74), not the network's.
            if case .transport(let code, let message, _) = error, code == 37 {
                guard target.lowercased().hasPrefix("file:"), let path = URL(string: target)?.path, !path.isEmpty else {
                    throw CatalogFetchError(isMissing: true, detail: message, target: "\(what) \(Self.shown(target))")
                }
                // A folder read through the caller's process (system mode): its reason is the message.
                let throughCaller = client.localFiles.map { path.hasPrefix($0.folder + "/") } ?? false
                var info = stat()
                let isAbsent = !throughCaller && lstat(path, &info) != 0 && errno == ENOENT
                let detail = throughCaller || access(path, R_OK) == 0 ? message : SystemErrorReason.text(errno)
                throw CatalogFetchError(isMissing: true, isAbsent: isAbsent, detail: detail, target: "\(what) \(Self.shown(target))", kind: .io)
            }
            let failure = GeneralFailure(L.localized("%1$s %2$s: %3$s", what, target, error.reason), kind: error.kind)
            if case .transport(let code, _, _) = error, [18, 52, 55, 56, 92].contains(code) { throw RetryableFetch(failure: failure) }
            throw failure
        }
        // file:// answers carry no status.
        guard response.status == 0 || (200..<300).contains(response.status) else {
            if response.status == 404 || response.status == 410 {
                throw CatalogFetchError(isMissing: true, isAbsent: true, detail: "HTTP \(response.status)", target: "\(what) \(Self.shown(target))")
            }
            let failure = GeneralFailure(L.localized("%1$s %2$s: HTTP %3$s", "\(what)", Self.shown(target), "\(response.status)"), kind: .unavailable)
            if response.status >= 500 || response.status == 408 || response.status == 429 { throw RetryableFetch(failure: failure) }
            throw failure
        }
        // A catalog is JSON and a signature minisign's text: a web page in their place is a
        // network's login page (a captive portal, common where users take their maps), not a
        // tampered file (found by an attack: it was refused as "changed after signing", 65).
        if Self.looksLikeHTML(response.body) {
            throw GeneralFailure(
                L.localized(
                    "%1$s %2$s: the server answered with a web page (HTML), not the file: if this network asks you to sign in (a Wi-Fi login page), sign in and try again",
                    "\(what)", Self.shown(target)),
                kind: .unavailable)
        }
        // file:// answers name no other place.
        return (response.body, response.status == 0 ? target : response.effectiveURL)
    }

    /// A catalog's address as said to the user: a `file:` URL as the path it names, its
    /// percent-escapes decoded (found by an attack: a stick folder `地図 スティック` was said as
    /// `file:///…/%E5%9C%B0%E5%9B%B3%20…`), anything else as it is.
    public static func shown(_ url: String) -> String {
        guard url.lowercased().hasPrefix("file:"), let path = URL(string: url)?.path, !path.isEmpty else { return url }
        return TerminalText.inline(path)
    }

    /// Whether `body` starts, after white space, with `<`: HTML (or XML), never JSON or a
    /// minisign signature.
    static func looksLikeHTML(_ body: Data) -> Bool {
        body.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "<")
    }
}

/// A catalog or signature that is not there (404, no such file).
struct CatalogFetchError: MapGateFailure, LocalizedError {
    var isMissing: Bool
    /// The file is not there at all (HTTP 404 or 410, a `file:` path that does not exist), as
    /// opposed to one that cannot be read.
    var isAbsent = false
    var detail: String
    var target = ""
    var kind: FailureKind = .unavailable
    var errorDescription: String? { "\(target): \(detail)" }
}
