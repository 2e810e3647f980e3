import MapGate
import Testing

/// `--json` lines are plain Encodable structs: every key is there for every outcome, `nil` as `null`.
@Suite struct JSONValueEncoderTests {
    struct Line: Encodable {
        var region: String
        var bytes: Int64
        var ok: Bool
        var previousVersion: String? = nil
        var exitCode: Int32? = nil
        var bounds: [Double]? = nil
        var tiles: Int? = nil
    }

    @Test func nilIsNullAndEveryKeyIsThere() throws {
        let value = try JSONValueEncoder.encode(Line(region: "kr", bytes: 12, ok: true))
        #expect(
            JSONLine.encode(value)
                == #"{"bounds":null,"bytes":12,"exitCode":null,"ok":true,"previousVersion":null,"region":"kr","tiles":null}"#)
    }

    @Test func valuesAreWrittenAsTheyAre() throws {
        let value = try JSONValueEncoder.encode(
            Line(region: "kr\u{1b}", bytes: -1, ok: false, previousVersion: "1.0", exitCode: 65, bounds: [126.5, -37.25, 127, 38], tiles: 3))
        #expect(
            JSONLine.encode(value)
                == #"{"bounds":[126.5,-37.25,127,38],"bytes":-1,"exitCode":65,"ok":false,"previousVersion":"1.0","region":"kr\u001b","tiles":3}"#)
    }
}
