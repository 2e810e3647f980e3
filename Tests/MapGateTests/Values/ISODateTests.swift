import Foundation
import MapGate
import Testing

/// `ISODate` reads and writes RFC 3339 by arithmetic; Foundation's ISO 8601 format style is the
/// reference it must agree with.
@Suite struct ISODateTests {
    @Test func agreesWithFoundationOverFourCenturies() throws {
        var generator = SystemRandomNumberGenerator()
        let reference = Date.ISO8601FormatStyle()
        // 1800-01-01 to 2200-01-01, plus the leap-day and century edges.
        var samples = (0..<5_000).map { _ in Date(timeIntervalSince1970: Double(Int64.random(in: -5_364_662_400...7_258_118_400, using: &generator))) }
        samples += ["2000-02-29T00:00:00Z", "1900-02-28T23:59:59Z", "2100-03-01T00:00:00Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z"]
            .map { try! reference.parse($0) }
        for date in samples {
            let text = ISODate.string(date)
            #expect(text == date.formatted(reference), "\(date.timeIntervalSince1970)")
            #expect(ISODate.parse(text) == date, "\(text)")
            #expect(ISODate.day(date) == String(text.prefix(10)))
        }
    }

    @Test(arguments: [
        ("2024-11-20T13:36:18Z", 1_732_109_778.0),
        ("2024-11-20t13:36:18z", 1_732_109_778.0),
        ("2024-11-20T13:36:18.25Z", 1_732_109_778.25),
        ("2024-11-20T13:36:18+09:00", 1_732_077_378.0),
        ("2024-11-20T13:36:18.5-01:30", 1_732_115_178.5),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
    ])
    func parses(text: String, seconds: Double) {
        #expect(ISODate.parse(text)?.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "", "garbage", "2024-11-20", "2024-11-20 13:36:18Z", "2024-11-20T13:36:18", "2024-13-20T13:36:18Z",
        "2024-04-31T00:00:00Z", "2023-02-29T00:00:00Z", "2024-11-20T24:00:00Z", "2024-11-20T13:60:00Z",
        "2024-11-20T13:36:60Z", "2024-11-20T13:36:18.Z", "2024-11-20T13:36:18Z ", "2024-11-20T13:36:18+0900",
        "2024-11-20T13:36:18+25:00", "+2024-11-20T13:36:18Z", "２０２４-11-20T13:36:18Z", "2024-1１-20T13:36:18Z",
    ])
    func refuses(text: String) {
        #expect(ISODate.parse(text) == nil)
    }

    @Test func farDatesAreWrittenWithoutTrapping() {
        #expect(ISODate.string(Date(timeIntervalSince1970: .infinity)) == "1970-01-01T00:00:00Z")
        #expect(ISODate.string(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59Z")
        #expect(ISODate.string(Date(timeIntervalSince1970: -1e300)) == "0001-01-01T00:00:00Z")
        #expect(ISODate.day(nil) == "?")
    }
}
