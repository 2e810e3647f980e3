import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The lookup against the test origin serving the real answers from `../shared/fixtures/lookup/`.
@Suite struct StoreLookupTests {
    let root: TemporaryDirectory
    let origin: TestOrigin

    init() throws {
        root = try TemporaryDirectory()
        for name in ["itunes-lookup-com.facebook.Facebook.json", "itunes-lookup-empty.json", "itunes-lookup-invalid-id.json"] {
            try FileManager.default.copyItem(atPath: try TestPaths.shared("lookup/" + name), toPath: root.file(name))
        }
        try root.write("not-json.json", "oops, no JSON here")
        try root.write("portal.json", "<html>oops</html>")
        try root.write("no-version.json", #"{"resultCount":1,"results":[{"trackId":1}]}"#)
        try root.write("bad-version.json", #"{"resultCount":1,"results":[{"version":"latest"}]}"#)
        origin = try TestOrigin(root: root.path)
    }

    func lookup(_ path: String, appID: Int? = 284_882_215, bundleID: String? = nil) -> StoreLookup {
        StoreLookup(
            client: HTTPClient(), endpoint: origin.baseURL + path, appID: appID, bundleID: bundleID, country: "us",
            connectTimeout: 2, totalTimeout: 5)
    }

    @Test func realAnswerIsRead() throws {
        let release = try lookup("/itunes-lookup-com.facebook.Facebook.json").fetch().release
        #expect(release.version == "15.0")
        #expect(release.storeURL?.hasPrefix("https://itunes.apple.com/") == true)
        #expect(release.releaseNotes?.isEmpty == false)
        #expect(release.releaseDate == nil)  // this real answer has no currentVersionReleaseDate
        #expect(release.trackID == 284_882_215)
        #expect(release.bundleID == "com.facebook.Facebook")
    }

    @Test func requestCarriesAppCountryCacheBusterAndNoCache() throws {
        _ = try lookup("/itunes-lookup-com.facebook.Facebook.json").fetch(cacheBuster: "xyz")
        let hit = try #require(origin.requests.last)
        #expect(hit.target.hasSuffix("?id=284882215&country=us&_=xyz"))
        let byBundle = try lookup("/l", appID: nil, bundleID: "com.facebook.Facebook").requestURL(cacheBuster: "1")
        #expect(byBundle == origin.baseURL + "/l?bundleId=com.facebook.Facebook&country=us&_=1")
    }

    @Test func releaseDateIsParsedAsUTC() throws {
        try root.write("dated.json", #"{"resultCount":1,"results":[{"trackId":284882215,"version":"2.0","currentVersionReleaseDate":"2024-11-20T13:36:18Z"}]}"#)
        let release = try lookup("/dated.json").fetch().release
        #expect(release.releaseDate == Date(timeIntervalSince1970: 1_732_109_778))
    }

    @Test(arguments: [
        ("/itunes-lookup-empty.json", "not published in storefront \"us\""),
        ("/itunes-lookup-invalid-id.json", "the service answered"),
        ("/not-json.json", "not a JSON object"),
        // A web page is a network's login page (found by an attack: it was "unreadable answer", 65).
        ("/portal.json", "the answer was a web page (HTML), not the store's"),
        ("/no-version.json", "has no version"),
        ("/bad-version.json", "is not a version number"),
        ("/_fault/status=503/x.json", "HTTP 503"),
        ("/_fault/status=404/x.json", "HTTP 404"),
        ("/_fault/drop/x.json", "store lookup:"),
    ])
    func eachFailureIsItsOwnClearError(path: String, message: String) {
        let error = #expect(throws: LookupError.self) { try lookup(path).fetch() }
        #expect(error?.localizedDescription.contains(message) == true, "\(error?.localizedDescription ?? "")")
    }

    @Test func eachFailureHasItsKind() {
        #expect(LookupError.notPublished(app: "a", country: "us").kind == .badData)
        #expect(LookupError.httpStatus(503, url: "u").kind == .unavailable)
        #expect(LookupError.network("x").kind == .unavailable)
    }

    @Test func timeoutIsANetworkError() {
        var slow = lookup("/_fault/stall=5/itunes-lookup-empty.json")
        slow.totalTimeout = 1
        let error = #expect(throws: LookupError.self) { try slow.fetch() }
        guard case .network(let message) = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(message.contains("timed out"))
    }

    @Test func noNetworkIsANetworkError() {
        let offline = StoreLookup(
            client: HTTPClient(), endpoint: "http://127.0.0.1:1/lookup", appID: 1, bundleID: nil, country: "us")
        let error = #expect(throws: LookupError.self) { try offline.fetch() }
        #expect(error?.kind == .unavailable)
    }

    /// A lookup endpoint that answers for another app (or a hand-made answer without the app's
    /// id) must not move the gate: "1.4.0" from any other app is no reason to reset it.
    @Test func answerForAnotherAppIsRefused() throws {
        try root.write("other.json", #"{"resultCount":1,"results":[{"trackId":999,"bundleId":"com.other","version":"1.4.0"}]}"#)
        try root.write("anonymous.json", #"{"resultCount":1,"results":[{"version":"1.4.0"}]}"#)
        let other = #expect(throws: LookupError.self) { try lookup("/other.json").fetch() }
        #expect(other?.localizedDescription.contains("the answer is for trackId 999, not app id 284882215") == true)
        #expect(other?.kind == .badData)
        #expect(throws: LookupError.self) { try lookup("/anonymous.json").fetch() }
        let byBundle = #expect(throws: LookupError.self) { try lookup("/other.json", appID: nil, bundleID: "com.facebook.Facebook").fetch() }
        #expect(byBundle?.localizedDescription.contains("bundleId com.other, not com.facebook.Facebook") == true)
        #expect(try lookup("/itunes-lookup-com.facebook.Facebook.json", appID: nil, bundleID: "com.facebook.Facebook").fetch().release.version == "15.0")
    }

    @Test func plainHTTPAnswerCarriesNoTrustedTime() throws {
        #expect(try lookup("/itunes-lookup-com.facebook.Facebook.json").fetch().trustedTime == nil)
    }

    @Test func unconfiguredAppIsAUsageError() {
        let error = #expect(throws: LookupError.self) { try lookup("/x", appID: nil).fetch() }
        #expect(error == .notConfigured)
    }

    /// An answer over 4 MiB came from a store that was reached: a bad answer (65), not "the
    /// store cannot be reached" (69).
    @Test func anAnswerTooLargeIsABadAnswerNotAnUnreachableStore() throws {
        try root.write("huge.json", #"{"resultCount":1,"results":[{"trackId":284882215,"version":"2.0","releaseNotes":""# + String(repeating: "x", count: 5 << 20) + #""}]}"#)
        let error = #expect(throws: LookupError.self) { try lookup("/huge.json").fetch() }
        #expect(error?.kind == .badData)
        #expect(error?.errorDescription?.contains("larger than") == true, "\(String(describing: error))")
        #expect(error?.errorDescription?.contains("cannot be reached") == false)
    }

    /// A version of a page's length is no version: refused, and said without printing it whole.
    @Test func aVersionLongerThanSixtyFourCharactersIsRefused() throws {
        let long = "1." + String(repeating: "0.", count: 100_000) + "1"
        try root.write("long.json", #"{"resultCount":1,"results":[{"trackId":284882215,"version":"\#(long)"}]}"#)
        let error = #expect(throws: LookupError.self) { try lookup("/long.json").fetch() }
        #expect(error?.kind == .badData)
        #expect((error?.errorDescription?.count ?? .max) < 400, "\(String(describing: error))")
        try root.write("ok.json", #"{"resultCount":1,"results":[{"trackId":284882215,"version":"1.0.0-beta.1.build.20261203"}]}"#)
        #expect(try lookup("/ok.json").fetch().release.version == "1.0.0-beta.1.build.20261203")
    }
}
