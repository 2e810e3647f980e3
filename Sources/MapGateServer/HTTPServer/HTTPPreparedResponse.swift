import CMicroHTTPD
import FoundationEssentials
import Synchronization

/// An answer that never changes (a tile of an installed region version): status, headers and
/// body fixed once. The HTTP layer makes libmicrohttpd's response for it the first time it is
/// sent and queues that same response for every later request, on any connection (libmicrohttpd
/// counts the references of a response), so sending it again copies no body and adds no header.
/// On h2o (the default) its fields are checked once (``sendsAsIs``), and each answer is sent
/// from its body where it lies, the prepared answer held until h2o is done.
/// The body is held once however many answers are in flight; it is not counted against the
/// ``HTTPBodyBudget`` (as a ``HTTPBodyBytes`` a handler keeps).
public final class HTTPPreparedResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: HTTPBodyBytes
    /// libmicrohttpd's response, made on first use (0 before; the pointer's bits after).
    private let made = Atomic<UInt>(0)
    /// Whether the fields can be sent as they are (``HTTPServerResponse/canSend(_:)``), checked once.
    let sendsAsIs: Bool

    public init(status: Int, headers: [(name: String, value: String)], body: HTTPBodyBytes) {
        self.status = status
        self.headers = headers
        self.body = body
        sendsAsIs = HTTPServerResponse.canSend(headers)
    }

    deinit {
        let pointer = made.load(ordering: .acquiring)
        if pointer != 0, let response = OpaquePointer(bitPattern: pointer) { cmhd_destroy_response(response) }
    }

    /// libmicrohttpd's response, made the first time (two threads may both make one: one is kept,
    /// the other destroyed); nil when a header is refused (the caller then answers the slow way,
    /// which says what was wrong). Only called by a running server, so libmicrohttpd is loaded.
    func response() -> OpaquePointer? {
        let existing = made.load(ordering: .acquiring)
        if existing != 0 { return OpaquePointer(bitPattern: existing) }
        guard sendsAsIs else { return nil }
        // libmicrohttpd may still send from the body after `self` is gone (it holds its own
        // reference to the response while a connection uses it): the response holds the body,
        // released by the free callback once libmicrohttpd's last reference goes.
        let box = Unmanaged.passRetained(HTTPBodyBox(body, budget: nil))
        guard let response = cmhd_create_response_from_buffer_with_free_callback_cls(body.count, body.bytes.baseAddress, bodyFreeCallback, box.toOpaque())
        else {
            box.release()
            return nil
        }
        for (name, value) in headers where !HTTPServerRequest.equalIgnoringASCIICase(name, "Content-Length") {
            guard cmhd_add_response_header(response, name, value) == .YES else {
                cmhd_destroy_response(response)
                return nil
            }
        }
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(response)))
        let (exchanged, current) = made.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if exchanged { return response }
        cmhd_destroy_response(response)
        return OpaquePointer(bitPattern: current)
    }
}
