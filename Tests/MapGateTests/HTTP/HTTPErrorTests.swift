import MapGate
import Testing

/// How an HTTP failure is said.
@Suite struct HTTPErrorTests {
    /// mapgate's own transport failures (negative codes) name no libcurl error (found by an
    /// attack: "(curl error -2)").
    @Test func mapgatesOwnTransportFailuresNameNoCurlError() {
        let error = HTTPError.transport(code: -2, message: "the server cannot resume at byte 10", url: "http://127.0.0.1/p")
        #expect(error.reason == "the server cannot resume at byte 10")
        #expect(error.errorDescription == "http://127.0.0.1/p: the server cannot resume at byte 10")
    }
}
