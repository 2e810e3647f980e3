import Foundation
import MapGateBase
@testable import MapGateTrust

// StoreLookup.decode over arbitrary bytes, for a lookup by app id and one by bundle id: only
// LookupError may come out, and an accepted answer names the right app and a real version.

private let lookups = [
    StoreLookup(
        client: HTTPClient(), endpoint: "https://itunes.apple.com/lookup", appID: 6_450_000_001, bundleID: nil, country: "us"),
    StoreLookup(
        client: HTTPClient(), endpoint: "https://itunes.apple.com/lookup", appID: nil, bundleID: "app.mapgate.offline",
        country: "us"),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLookup(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    for lookup in lookups {
        let release: StoreRelease
        do {
            release = try lookup.decode(data)
        } catch let error as LookupError {
            require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
            continue
        } catch {
            unexpected(error)
        }
        guard let version = try? AppVersion(release.version) else {
            require(false, "accepted version \"\(release.version)\" is not a version")
            continue
        }
        require(version.text == release.version, "version \"\(release.version)\" is not trimmed")
        if let appID = lookup.appID {
            require(release.trackID == appID, "accepted an answer for trackId \(String(describing: release.trackID))")
        } else {
            require(release.bundleID == lookup.bundleID, "accepted an answer for bundleId \(String(describing: release.bundleID))")
        }
    }
    return 0
}
