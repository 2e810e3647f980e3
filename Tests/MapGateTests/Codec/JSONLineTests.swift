import Foundation
import MapGate
import Testing

/// `--json` lines: the same text as `JSONSerialization` (sorted keys, unescaped slashes) with
/// DEL, C1 and U+2028/9 escaped, as `Console.json` wrote them before, at a fraction of the time.
@Suite struct JSONLineTests {
    /// What `Console.json` did before: Foundation, then the extra escapes.
    static func foundation(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        var text = ""
        for scalar in String(decoding: data, as: UTF8.self).unicodeScalars {
            if scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    // Immutable after initialisation; only read.
    nonisolated(unsafe) static let samples: [[String: Any]] = [
        ["id": "kr-seoul", "name": "Seoul", "size": 48_211_733, "installedVersion": NSNull(), "status": "not-installed", "serial": 42],
        ["installedSize": Int64(1) << 40, "installedAt": "2026-11-01T00:00:00Z", "sizeOnDisk": 5, "sha256": "ab", "signedBy": NSNull()],
        ["bounds": [-180.0, -85.0511, 180.0, 85.0511], "minzoom": 0, "maxzoom": 14, "ok": true, "damaged": false],
        ["error": "region \"x\": bad \\ path /a/b\n\t\u{1B}[31m\u{7F}\u{85}\u{9F}\u{2028}\u{2029}é漢😀\u{0}", "exitCode": 65],
        ["nested": ["b": 1, "a": ["x", 2, NSNull()]] as [String: Any], "empty": [String: Any](), "list": [Any]()],
        ["url": "http://127.0.0.1:8080/", "regions": 3, "Zeta": 1, "alpha": 2, "previousVersion": "1", "resumedFrom": 0],
    ]

    @Test(arguments: 0..<samples.count)
    func sameTextAsFoundation(index: Int) throws {
        let object = Self.samples[index]
        let value = try JSONValue(parsing: try JSONSerialization.data(withJSONObject: object))
        #expect(JSONLine.encode(value) == (try Self.foundation(object)))
    }
}
