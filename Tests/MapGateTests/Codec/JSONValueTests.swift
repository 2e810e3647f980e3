import Foundation
import MapGate
import Testing

/// `JSONValue` reads and writes what `JSONSerialization` read and wrote (mapgate no longer links
/// Foundation): the same bytes for the same options, the same parse errors.
@Suite struct JSONValueTests {
    static func foundationText(_ data: Data) -> String {
        do {
            let object = try JSONSerialization.jsonObject(with: data)
            return "OK " + String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
        } catch {
            return "ERR " + ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "-")
        }
    }

    static func ourText(_ data: Data) -> String {
        do {
            return "OK " + String(decoding: try JSONValue(parsing: data).encoded([.sortedKeys, .prettyPrinted]), as: UTF8.self)
        } catch {
            return "ERR \(error)"
        }
    }

    static let documents: [String] = [
        "{x", "", "[1,]", "{\"a\":tru}", "{\"a\":1,}", "{\"a\" 1}", "[1 2]", "\"abc", "{\"a\":\"\\q\"}", "{\"a\":01}", "{\"a\":-}",
        "{\"a\":1.}", "{\"a\":1e}", "[\"\u{1}\"]", "{\"a\":1}x", "  ", "[nul]", "{\"a\":\"\\ud800\"}", "{\"a\":1}\n\n  ]",
        "{\n\"a\": [1,\n 2,\n x]}", "\u{FEFF}{}", "1", "\"s\"", "[1e400]", "[-0]", "[1.5e3]", "[9223372036854775807]",
        "[-9223372036854775808]", "[1.0]", "[0.1]", "[1E2]", "[true,false,null]", "{\"a\":1,\"a\":2}", "[\"\\u00e9\\/\"]", "{1:2}",
        "[1,2", "[\"\\u12\"]", "[\"\\ud800x\"]", "[\"\\udc00\"]", "[\"\\uZZZZ\"]", "1 x", "[1x]", "{\"a\"}", "{\"a\":}", "[-01]",
        "[.5]", "[+1]", "[1e+]", "[0x1]", "{,}", "[,]", "[1,,2]", "[\"\\ud800\\u0041\"]", "[\"a\tb\"]", "[\"\\ud83d\\ude00\"]",
        "[1.25e-3, -0.0, 1e20, 123.456, 5e-324]", "{\"b\":{\"c\":[{}, []]}}", "[\"\\u0000\"]", "[" + String(repeating: "[", count: 600),
        "{\"formatVersion\": 1, \"regions\": [{\"id\": \"a/b\", \"bounds\": [-180, -85.0511, 180, 85.0511]}], \"Serial\": 7}",
    ]

    @Test(arguments: documents)
    func parsesAndRewritesAsFoundation(text: String) {
        #expect(Self.ourText(Data(text.utf8)) == Self.foundationText(Data(text.utf8)))
    }

    @Test(arguments: [[0x5B, 0xFF, 0x5D], [0x5B, 0x22, 0xFF, 0x22, 0x5D], [0x5B, 0x22, 0x61, 0xC3, 0x22, 0x5D], [0x5B, 0x22, 0xE2, 0x82, 0x22, 0x5D]] as [[UInt8]])
    func invalidUTF8IsReportedAsFoundation(bytes: [UInt8]) {
        #expect(Self.ourText(Data(bytes)) == Self.foundationText(Data(bytes)))
    }

    @Test func writesTheBytesFoundationWrites() throws {
        let foundation: [String: Any] = [
            "a": [String: Any](), "b": [Any](), "c": [1, 2.5, "x/y", ["k": NSNull()]], "d": true, "e": "\u{1}\u{1f}\u{7f}é\u{2028}\n\"\\",
            "f": Float(0.1), "g": 1e20, "h": -0.0, "i": 1e-7, "j": Double(Int64.max), "l": 123.456, "m": Int8(-3), "n": [Float(1.5)],
            "o": Int64.min, "p": UInt32.max,
        ]
        var ours = foundation
        ours["c"] = [1, 2.5, "x/y", ["k": JSONValue.null]] as [Any]
        let options: [(JSONSerialization.WritingOptions, JSONValue.WritingOptions)] = [
            ([.sortedKeys, .prettyPrinted, .withoutEscapingSlashes], [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]),
            ([.sortedKeys], [.sortedKeys]), ([.sortedKeys, .withoutEscapingSlashes], [.sortedKeys, .withoutEscapingSlashes]),
        ]
        for (theirs, mine) in options {
            let expected = String(decoding: try JSONSerialization.data(withJSONObject: foundation, options: theirs), as: UTF8.self)
            #expect(String(decoding: try JSONValue.encode(ours, mine), as: UTF8.self) == expected)
        }
        #expect(String(decoding: try JSONValue.encode(["a/b"]), as: UTF8.self) == #"["a\/b"]"#)
        #expect(throws: JSONValue.WriteError.self) { try JSONValue.encode(["x": Double.nan]) }
    }

    /// `.sortedKeys` is ICU's collation (punctuation, digits by value, letters, lowercase first):
    /// random ASCII keys, 2,000 objects of six.
    @Test func sortsKeysAsFoundation() throws {
        struct Generator: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return state
            }
        }
        var generator = Generator(state: 42)
        let alphabet = Array("aAbBzZ09 1_-.,;:!?'\"()[]{}@*/\\&#%`^+<=>|~$\t")
        for _ in 0..<2_000 {
            var object: [String: Any] = [:]
            for _ in 0..<6 {
                let length = Int.random(in: 1...4, using: &generator)
                object[String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })] = 1
            }
            let expected = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            #expect(String(decoding: try JSONValue.encode(object, [.sortedKeys]), as: UTF8.self) == expected)
        }
    }

    @Test func numbersConvertAsNSNumberDid() throws {
        let value = try JSONValue(parsing: Data(#"[1, 1.0, 1.5, true, false, "1", null, 9007199254740993]"#.utf8))
        let list = try #require(value.arrayValue)
        #expect(list.map(\.int) == [1, 1, nil, 1, 0, nil, nil, 9_007_199_254_740_993])
        #expect(list.map(\.double) == [1, 1, 1.5, 1, 0, nil, nil, 9_007_199_254_740_992])
        #expect(list.map(\.isBoolean) == [false, false, false, true, true, false, false, false])
        #expect(list[6].isNull && list[5].stringValue == "1")
    }
}
