import Foundation
import MapGateBase
@testable import MapGateTrust

// Catalog.parse over arbitrary bytes: only CatalogError may come out, and every catalog it
// accepts satisfies the rules the rest of mapgate relies on.

private let sourceURL = "https://maps.example.org/v1/catalog.json"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalog(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let catalog: Catalog
    do {
        catalog = try Catalog.parse(data, sourceURL: sourceURL)
    } catch let error as CatalogError {
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return 0
    } catch {
        unexpected(error)
    }
    require(catalog.sourceURL == sourceURL, "sourceURL changed")
    if let minimum = catalog.minimumAppVersion {
        require((try? AppVersion(minimum)) != nil, "catalog minimumAppVersion \(minimum) is not a version")
    }
    if let serial = catalog.serial { require(serial >= 0, "negative serial \(serial)") }
    if let gate = catalog.gate {
        require(gate.graceDays.map { (0...365).contains($0) } ?? true, "gate graceDays \(String(describing: gate.graceDays))")
        require(gate.maxPrompts.map { (0...100).contains($0) } ?? true, "gate maxPrompts")
        require(gate.closeAfterDays.map { (0...3650).contains($0) } ?? true, "gate closeAfterDays")
        if let minimum = gate.minimumAppVersion { require((try? AppVersion(minimum)) != nil, "gate minimumAppVersion") }
    }
    var ids = Set<String>()
    for region in catalog.regions {
        require(Catalog.isValidRegionID(region.id), "invalid id \(region.id)")
        require(ids.insert(region.id).inserted, "duplicate id \(region.id)")
        require(catalog.region(region.id) == region, "region(\(region.id)) finds another region")
        require(!region.version.isEmpty, "empty version")
        require((1...Catalog.maximumSize).contains(region.size), "size \(region.size)")
        require((1...Catalog.maximumSize).contains(region.installedSize), "installedSize \(region.installedSize)")
        require(
            region.sha256.utf8.count == 64 && region.sha256.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) },
            "sha256 \"\(region.sha256)\" is not 64 lowercase ASCII hex digits")
        require((0...30).contains(region.minzoom) && region.minzoom <= region.maxzoom && region.maxzoom <= 30, "zoom range")
        let scheme = URL(string: region.url)?.scheme?.lowercased()
        require(["http", "https", "file"].contains(scheme ?? ""), "url \(region.url) has scheme \(scheme ?? "none")")
        if let bounds = region.bounds {
            require(bounds.count == 4 && bounds[1] <= bounds[3], "bounds \(bounds)")
        }
        if let minimum = region.minimumAppVersion { require((try? AppVersion(minimum)) != nil, "region minimumAppVersion") }
    }
    return 0
}
