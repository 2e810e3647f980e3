import Foundation
import Testing
import TestSupport

/// The shipped targets import `FoundationEssentials`, never `Foundation` (which links ICU: 34 MB
/// of the binary). See docs/decisions/foundation-essentials.md.
@Suite struct ShippedImportsTests {
    @Test func noShippedFileImportsFoundation() throws {
        var offenders: [String] = []
        for target in [
            "MapGate", "MapGateBase", "MapGateStorage", "MapGateTrust", "MapGateWorkflows", "MapGateServer", "MapGateDemo", "mapgate",
        ] {
            let root = TestPaths.repository + "/Sources/" + target
            let walker = try #require(FileManager.default.enumerator(atPath: root))
            while let relative = walker.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                    guard words.count >= 2, words[0] == "import" else { continue }
                    if ["Foundation", "FoundationNetworking", "FoundationXML", "FoundationInternationalization"].contains(String(words[1])) {
                        offenders.append("\(target)/\(relative): \(line)")
                    }
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
