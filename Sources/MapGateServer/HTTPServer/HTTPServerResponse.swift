import FoundationEssentials

/// What a handler answers: a status, headers and a body, or "drop the connection".
/// `Content-Length` is the HTTP layer's (from the body); a `Content-Length` header given here is
/// ignored. `HEAD` answers carry the length of the body they would have sent, without it.
public struct HTTPServerResponse {
    public enum Body {
        /// Made for this answer: copied once, and counted against the server's
        /// ``HTTPBodyBudget`` until the client has taken it.
        case data(Data)
        /// Kept by the handler and shared by every answer that sends it: never copied, not counted.
        case shared(HTTPBodyBytes)
        /// `length` bytes read from `stream` as the client takes them (a file, a fault).
        case stream(length: Int, any HTTPBodyStream)
        /// An answer fixed once (status, headers and body are the prepared response's), sent
        /// again and again without being made again.
        case prepared(HTTPPreparedResponse)
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body
    /// Close the connection after this response.
    public var closesConnection = false
    /// Close the connection without answering (a fault the test origin can inject).
    public var dropsConnection = false
    /// What answered (a route's name): it travels to the log entry, so the log and the metrics
    /// never parse the path a second time (as go-pmtiles' server returns its handler's label).
    public var label: String?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data(), closesConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = .data(body)
        self.closesConnection = closesConnection
    }

    public init(status: Int, headers: [(name: String, value: String)], shared: HTTPBodyBytes) {
        self.status = status
        self.headers = headers
        body = .shared(shared)
    }

    public init(status: Int, headers: [(name: String, value: String)], length: Int, stream: any HTTPBodyStream) {
        self.status = status
        self.headers = headers
        body = .stream(length: length, stream)
    }

    /// The answer `prepared` holds.
    public init(prepared: HTTPPreparedResponse) {
        status = prepared.status
        headers = prepared.headers
        body = .prepared(prepared)
    }

    /// No answer: the connection is closed.
    public static var drop: HTTPServerResponse {
        var response = HTTPServerResponse(status: 0)
        response.dropsConnection = true
        return response
    }

    /// Bytes of body the response carries (what a GET would send).
    public var bodyLength: Int {
        switch body {
        case .data(let data): data.count
        case .shared(let bytes): bytes.count
        case .stream(let length, _): length
        case .prepared(let prepared): prepared.body.count
        }
    }

    public func header(_ name: String) -> String? {
        headers.first { HTTPServerRequest.equalIgnoringASCIICase($0.name, name) }?.value
    }

    /// Whether every field can be sent as it is: the HTTP libraries write a field as they are
    /// given it, and a line break in one would split the answer (a value adding fields of its
    /// own); a NUL would end it early. Such an answer is 500 instead, on either library.
    static func canSend(_ headers: [(name: String, value: String)]) -> Bool {
        headers.allSatisfy { canSend(name: $0.name, value: $0.value) }
    }

    /// Whether one field can be sent as it is (``canSend(_:)``).
    static func canSend(name: String, value: String) -> Bool {
        !breaksLine(name) && !breaksLine(value)
    }

    private static func breaksLine(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}

/// A body produced while it is sent. Called on the thread that serves the connection; in a
/// thread-per-connection server it may block (the test origin's `stall`).
public protocol HTTPBodyStream: AnyObject {
    /// Fills `buffer` with the bytes at `offset`.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> HTTPBodyChunk
}

public enum HTTPBodyChunk {
    /// This many bytes were written to the buffer.
    case bytes(Int)
    /// The body ends here, short of its announced length: the connection is closed (a cut).
    case abort
}

/// Handles requests one at a time. A server keeps a pool of handlers and lends one to each
/// request, so a handler may own resources such as SQLite connections without locking.
public protocol HTTPRequestHandler: AnyObject {
    func respond(to request: HTTPServerRequest) -> HTTPServerResponse
}
