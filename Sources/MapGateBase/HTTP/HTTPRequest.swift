import FoundationEssentials

/// One GET request and the limits it runs under.
public struct HTTPRequest: Sendable {
    public var url: String
    /// Extra request headers, sent in this order (`Range`, `If-Range`, `If-None-Match`, …).
    public var headers: [(name: String, value: String)]
    /// Seconds allowed to establish the connection.
    public var connectTimeout: Double
    /// Seconds allowed for the whole transfer; `nil` for no limit (large downloads).
    public var totalTimeout: Double?
    /// A transfer slower than `lowSpeedLimit` bytes/s for `lowSpeedTime` seconds fails as stalled.
    public var lowSpeedLimit: Int
    public var lowSpeedTime: Int
    /// Redirects followed before the request fails.
    public var maxRedirects: Int
    /// For a `file://` URL, the byte to start reading at (a resumed copy from a folder: a file
    /// has no `Range` header); 0 reads it all.
    public var fileOffset: Int64 = 0

    public init(
        url: String,
        headers: [(name: String, value: String)] = [],
        connectTimeout: Double = 10,
        totalTimeout: Double? = 60,
        lowSpeedLimit: Int = 1,
        lowSpeedTime: Int = 30,
        maxRedirects: Int = 5
    ) {
        self.url = url
        self.headers = headers
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.maxRedirects = maxRedirects
    }
}

/// Status and headers of a response (of the last response, after redirects).
public struct HTTPResponseHead: Sendable {
    public var status: Int
    /// Header fields in the order received; names keep their case.
    public var headers: [(name: String, value: String)]
    /// The URL that answered, after redirects.
    public var effectiveURL: String

    /// The first value of a header, matched without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringCase(name) }?.value
    }
}

/// A response whose body was read into memory.
public struct HTTPResponse: Sendable {
    public var head: HTTPResponseHead
    public var body: Data
    public var status: Int { head.status }
    public func header(_ name: String) -> String? { head.header(name) }
}
