import Foundation
import MapGateBase
@testable import MapGateTrust

// ManagedPolicy.parse over arbitrary bytes, over the product profile: only ConfigurationError
// may come out, and accepted settings stay in their documented ranges.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let settings: GateSettings
    do {
        settings = try ManagedPolicy.parse(data, path: "/fuzz/policy.json", over: ProductProfile.settings)
    } catch let error as ConfigurationError {
        require(error.file == .managedPolicy, "error about the \(error.file.rawValue)")
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return 0
    } catch {
        unexpected(error)
    }
    require(settings.appID.map { $0 >= 1 } ?? true, "appID \(String(describing: settings.appID))")
    require(settings.country.count == 2 && settings.country == settings.country.lowercased(), "country \(settings.country)")
    require((0...365).contains(settings.graceDays), "graceDays \(settings.graceDays)")
    require((0...100).contains(settings.maxPrompts), "maxPrompts \(settings.maxPrompts)")
    require(settings.closeAfterDays.map { (0...3650).contains($0) } ?? true, "closeAfterDays \(String(describing: settings.closeAfterDays))")
    require(
        settings.checkIntervalHours.isFinite && (0...GateSettings.maximumCheckIntervalHours).contains(settings.checkIntervalHours),
        "checkIntervalHours \(settings.checkIntervalHours)")
    require(settings.trustedKeys.allSatisfy { $0.hasPrefix("RW") && $0.count == 56 }, "trustedKeys \(settings.trustedKeys)")
    return 0
}
