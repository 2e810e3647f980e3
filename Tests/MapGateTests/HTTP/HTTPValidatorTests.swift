import MapGate
import Testing

/// What mapgate keeps of a server's validators to send back in `If-Range`.
@Suite struct HTTPValidatorTests {
    @Test(arguments: [#""abc""#, #"W/"abc""#, #""""#, #""5f3a-1b2c""#])
    func entityTagsAreKept(value: String) {
        #expect(HTTPValidator.entityTag(value) == value)
    }

    /// Found by an attack: a bare CR, an escape code, a 60 KB value went back whole.
    @Test(arguments: ["\"a\rX-Injected: yes\"", "\"a\u{1B}[31m\"", "\"" + String(repeating: "a", count: 60_000) + "\"", "abc", "\"a\"b\"", "W/abc", "\"é\""])
    func otherValuesAreDropped(value: String) {
        #expect(HTTPValidator.entityTag(value) == nil)
    }

    @Test func datesArePrintableAndShort() {
        #expect(HTTPValidator.date("Wed, 21 Oct 2026 07:28:00 GMT") == "Wed, 21 Oct 2026 07:28:00 GMT")
        #expect(HTTPValidator.date("Wed, 21 Oct 2026\r07:28:00 GMT") == nil)
        #expect(HTTPValidator.date(String(repeating: "1", count: 100)) == nil)
        #expect(HTTPValidator.date("") == nil)
    }
}
