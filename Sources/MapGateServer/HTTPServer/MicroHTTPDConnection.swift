import CMicroHTTPD
import FoundationEssentials

/// One libmicrohttpd connection with a request on it: its header fields, and where its answer
/// is queued.
struct MicroHTTPDConnection: HTTPAnswerSink {
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) { self.connection = connection }

    /// The request's header fields, as libmicrohttpd parsed them.
    func headers() -> [(name: String, value: String)] {
        final class Collected { var headers: [(name: String, value: String)] = [] }
        let collected = Collected()
        collected.headers.reserveCapacity(12)
        withExtendedLifetime(collected) {
            _ = cmhd_get_connection_values(connection, .HEADER_KIND, { cls, _, key, value in
                guard let cls, let key else { return .NO }
                let collected = Unmanaged<Collected>.fromOpaque(cls).takeUnretainedValue()
                collected.headers.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.headers
    }

    /// Builds libmicrohttpd's response and queues it; a header it refuses (a line break in a
    /// value) turns the answer into a 500 rather than a half-made response.
    func queue(_ response: HTTPServerResponse, body: HTTPBodyBox?, method: String, closing: Bool) -> Bool {
        queued(response, body: body, method: method, closing: closing) == .YES
    }

    private func queued(_ response: HTTPServerResponse, body: HTTPBodyBox?, method: String, closing: Bool) -> MHD_Result {
        if response.dropsConnection { return .NO }
        let made: OpaquePointer?
        if response.status == 304 {
            // libmicrohttpd writes one Content-Length itself, from the response's size, even on a
            // 304 (whose body it never sends): a 304 may only carry the representation's length
            // (RFC 9110 §8.6), so the response is made of that size, with a reader it never calls.
            // Adding the header by hand as well gave two (and Chromium refuses such an answer).
            let length = response.header("Content-Length").flatMap { UInt64($0) } ?? 0
            made = cmhd_create_response_from_callback(length, 4 << 10, readerCallback, nil, nil)
        } else {
            switch response.body {
            case .prepared(let prepared) where !closing:
                // Queued as it is: libmicrohttpd takes a reference to it for this connection.
                if let made = prepared.response() { return cmhd_queue_response(connection, UInt32(prepared.status), made) }
                fallthrough  // made the slow way, which says which header was refused
            case .data, .shared, .prepared:
                // Sent from the box's bytes, no copy; the box is released when libmicrohttpd is done.
                var owned: HTTPBodyBox? = body
                if owned == nil, case .prepared(let prepared) = response.body { owned = HTTPBodyBox(prepared.body, budget: nil) }
                guard let body = owned else { return .NO }
                let box = Unmanaged.passRetained(body)
                made = cmhd_create_response_from_buffer_with_free_callback_cls(
                    body.bytes.count, body.bytes.bytes.baseAddress, bodyFreeCallback, box.toOpaque())
                if made == nil { box.release() }
            case .stream(let length, let stream):
                let box = Unmanaged.passRetained(HTTPBodyStreamBox(stream)).toOpaque()
                made = cmhd_create_response_from_callback(UInt64(length), 64 << 10, readerCallback, box, readerFreeCallback)
                if made == nil { Unmanaged<HTTPBodyStreamBox>.fromOpaque(box).release() }
            }
        }
        guard let made else { return .NO }
        defer { cmhd_destroy_response(made) }
        for (name, value) in response.headers where !HTTPServerRequest.equalIgnoringASCIICase(name, "Content-Length") {
            // libmicrohttpd refuses a line break, but a NUL would end the value early.
            guard HTTPServerResponse.canSend(name: name, value: value), cmhd_add_response_header(made, name, value) == .YES else {
                let failure = Data("bad response header \(name)\n".utf8)
                return queued(HTTPServerResponse(status: 500, body: failure), body: HTTPBodyBox(HTTPBodyBytes(failure), budget: nil), method: method, closing: closing)
            }
        }
        if closing {
            // Without the header the connection would stay open: close it without an answer.
            guard cmhd_add_response_header(made, "Connection", "close") == .YES else { return .NO }
        }
        return cmhd_queue_response(connection, UInt32(response.status), made)
    }
}
