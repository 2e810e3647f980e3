import Foundation
import MapGateBase
@testable import MapGateTrust

// Configuration.parse (the user's config.json) over arbitrary bytes: only ConfigurationError
// may come out, and what it accepts holds only valid values.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let config: Configuration
    do {
        config = try Configuration.parse(data, path: "/fuzz/config.json")
    } catch let error as ConfigurationError {
        require(error.file == .configuration, "error about the \(error.file.rawValue)")
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return 0
    } catch {
        unexpected(error)
    }
    if let url = config.catalogURL {
        let scheme = URL(string: url)?.scheme?.lowercased() ?? ""
        require(["http", "https", "file"].contains(scheme), "catalogURL \(url)")
    }
    if let caFile = config.caFile { require(!caFile.isEmpty, "empty caFile") }
    require(!config.leafletPath.isEmpty, "empty leafletPath")
    return 0
}
