import CCurl
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The project's only network stack: GET requests through libcurl.
///
/// TLS verification is always on. Proxy variables (`http_proxy`, `https_proxy`, `no_proxy`) are
/// honoured by libcurl itself, unless ``usesProxies`` is off.
public struct HTTPClient: Sendable {
    public var userAgent: String
    /// A CA bundle (PEM) to trust instead of the system bundle, for a publisher with its own CA.
    public var caFile: String?
    /// Whether the proxy variables apply. The store lookup turns them off: a proxy the user runs
    /// could answer for the store.
    public var usesProxies = true
    /// Whether a redirect may lead from `https` to plain `http`. The store lookup refuses it.
    public var allowsDowngrade = true
    /// What requests to one host carry (system mode's catalog credentials, for the publisher's
    /// catalog host only: never a mirror's, never the store's).
    public var credentials: HostCredentials?
    /// Where the files of one folder are read from, when this process may not enter it (system
    /// mode's `sync --from DIR`: the caller's process opens them); nil: the file system.
    public var localFiles: (any LocalFileSource)?

    /// Credentials for the requests to one host: an `Authorization` header (libcurl does not send
    /// it on to another host a redirect leads to) and a TLS client certificate (PEM files; the
    /// key may be in the certificate's file), either or both.
    public struct HostCredentials: Sendable, Equatable {
        public var host: String
        public var authorization: String?
        public var certificate: String?
        public var key: String?

        public init(host: String, authorization: String? = nil, certificate: String? = nil, key: String? = nil) {
            self.host = host
            self.authorization = authorization
            self.certificate = certificate
            self.key = key
        }
    }

    public init(userAgent: String = BuildInfo.userAgent, caFile: String? = nil) {
        self.userAgent = userAgent
        self.caFile = caFile
    }

    /// Fetches `request` with the body in memory. Any HTTP status is returned, not thrown.
    ///
    /// - Parameter maxBodyBytes: a body larger than this fails the request.
    public func get(_ request: HTTPRequest, maxBodyBytes: Int = 32 << 20) throws -> HTTPResponse {
        // libcurl takes a failed read of a `file://` file for its end (found by an attack: a
        // stick's read error on catalog.json was "the file changed after signing", and on
        // mirror.json "truncated?", exit 65): fewer bytes than the file holds, while it still
        // holds them, is a read error (74), said as such.
        let local = request.fileOffset == 0 ? (try? checkLocalFile(request.url)) ?? nil : nil
        let expected = local.flatMap { try? localStatus($0).size }
        var body = Data()
        let head = try stream(request, onHead: { _ in body.removeAll(keepingCapacity: true) }) { chunk in
            guard body.count + chunk.count <= maxBodyBytes else {
                throw HTTPError.tooLarge(limit: maxBodyBytes, url: request.url)
            }
            body.append(contentsOf: chunk)
        }
        if let local, let expected, Int64(body.count) < expected, let now = try? localStatus(local).size, now >= expected {
            throw HTTPError.transport(
                code: HTTPError.localReadFailure,
                message: L.localized(
                    "could not be read to its end: %1$s of its %2$s bytes were read (a read error: was the stick or share taken away?)", "\(body.count)",
                    "\(expected)"), url: request.url)
        }
        return HTTPResponse(head: head, body: body)
    }

    /// Fetches `request`, handing the body to `onBody` chunk by chunk as it arrives.
    ///
    /// `onHead` runs once, before the first body byte (or after the transfer when there is no
    /// body); it may throw to refuse the response, as may `onBody`. `progress` gets the bytes
    /// received and expected (0 when unknown) and returns `false` to cancel.
    @discardableResult
    public func stream(
        _ request: HTTPRequest,
        onHead: (HTTPResponseHead) throws -> Void = { _ in },
        progress: ((Int64, Int64) -> Bool)? = nil,
        onBody: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> HTTPResponseHead {
        let local = try checkLocalFile(request.url)
        if let local, let source = localSource(for: local) {
            return try streamLocal(request, path: local, from: source, onHead: onHead, progress: progress, onBody: onBody)
        }
        return try withoutActuallyEscaping(onHead) { onHead in
            try withoutActuallyEscaping(onBody) { onBody in
                let transfer = try Transfer(url: request.url, onHead: onHead, onBody: onBody)
                transfer.progress = progress
                try configure(transfer, for: request)
                return try transfer.perform()
            }
        }
    }

    /// A `file://` URL must name a regular file, not through a symbolic link: libcurl would open
    /// a FIFO named `catalog.json` on a stick and wait for a writer for ever, and a link in a
    /// mirror's folder (a package that is a link to `/etc/shadow`) would make mapgate read a file
    /// the mirror does not hold. Checked without opening anything (`lstat`). Returns the path of
    /// a `file://` URL, nil for any other.
    func checkLocalFile(_ url: String) throws -> String? {
        guard url.lowercased().hasPrefix("file:"), let path = URL(string: url)?.path, !path.isEmpty else { return nil }
        // Missing: libcurl (or the source's open) says so, as curl error 37.
        guard let info = try? localStatus(path) else { return path }
        if info.isRegularFile { return path }
        if info.isSymbolicLink { throw HTTPError.notRegularFile(reason: L.localized("is a symbolic link: refused (a mirror's files must be its own)"), url: url) }
        throw HTTPError.notRegularFile(reason: L.localized("is %1$s, not a regular file: refused", "\(RegularFile.kindName(mode_t(info.mode)))"), url: url)
    }

    private func configure(_ transfer: Transfer, for request: HTTPRequest) throws {
        let easy = transfer.easy
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https,file")
        let secure = request.url.lowercased().hasPrefix("https:")
        let credentialed = credentials.map { URLComponents(string: request.url)?.host?.lowercased() == $0.host.lowercased() } ?? false
        // A request that carries the machine's credentials over https is never led to plain http
        // by a redirect on its host, where libcurl would send them in the clear (found by an attack).
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, secure && (!allowsDowngrade || credentialed) ? "https" : "http,https")
        // An empty proxy name turns proxies off, the variables included (CURLOPT_PROXY(3)).
        if !usesProxies { try easy.set(CURLOPT_PROXY, "") }
        try easy.set(CURLOPT_FOLLOWLOCATION, 1)
        try easy.set(CURLOPT_MAXREDIRS, request.maxRedirects)
        if request.fileOffset > 0, request.url.lowercased().hasPrefix("file:") { try easy.set(CURLOPT_RESUME_FROM, Int(request.fileOffset)) }
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(request.connectTimeout * 1000))
        try easy.set(CURLOPT_TIMEOUT_MS, request.totalTimeout.map { Int($0 * 1000) } ?? 0)
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedLimit)
        try easy.set(CURLOPT_LOW_SPEED_TIME, request.lowSpeedTime)
        try easy.set(CURLOPT_NOSIGNAL, 1)
        try easy.set(CURLOPT_USERAGENT, userAgent)
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { try easy.set(CURLOPT_CAINFO, caFile) }
        var headers = request.headers
        if let credentials, credentialed, request.url.lowercased().hasPrefix("http") {
            if let authorization = credentials.authorization { headers.append(("Authorization", authorization)) }
            if secure, let certificate = credentials.certificate {
                try easy.set(CURLOPT_SSLCERT, certificate)
                try easy.set(CURLOPT_SSLCERTTYPE, "PEM")
                if let key = credentials.key { try easy.set(CURLOPT_SSLKEY, key) }
            }
        }
        try easy.setHeaders(headers)
    }
}

/// The state of one running transfer, reached from libcurl's C callbacks through `Unmanaged`.
private final class Transfer {
    let url: String
    let easy: CurlEasy
    let onHead: (HTTPResponseHead) throws -> Void
    let onBody: (UnsafeRawBufferPointer) throws -> Void
    var progress: ((Int64, Int64) -> Bool)?
    var headers: [(name: String, value: String)] = []
    var head: HTTPResponseHead?
    var callbackError: (any Error)?
    var cancelled = false
    var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

    init(
        url: String, onHead: @escaping (HTTPResponseHead) throws -> Void,
        onBody: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        self.url = url
        self.easy = try CurlEasy(url: url)
        self.onHead = onHead
        self.onBody = onBody
    }

    func perform() throws -> HTTPResponseHead {
        let me = Unmanaged.passUnretained(self).toOpaque()
        // Larger reads than the 16 KiB default: fewer calls per megabyte of a package.
        try easy.set(CURLOPT_BUFFERSIZE, 256 << 10)
        try easy.set(CURLOPT_WRITEFUNCTION, writeCallback: transferWrite)
        try easy.set(CURLOPT_WRITEDATA, pointer: me)
        try easy.set(CURLOPT_HEADERFUNCTION, writeCallback: transferHeader)
        try easy.set(CURLOPT_HEADERDATA, pointer: me)
        try easy.set(CURLOPT_XFERINFOFUNCTION, progressCallback: transferProgress)
        try easy.set(CURLOPT_XFERINFODATA, pointer: me)
        try easy.set(CURLOPT_NOPROGRESS, progress == nil ? 1 : 0)

        let code = try errorBuffer.withUnsafeMutableBufferPointer { buffer in
            try easy.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(buffer.baseAddress))
            // Unsetting a buffer cannot fail: libcurl only stores the pointer.
            defer { try? easy.set(CURLOPT_ERRORBUFFER, pointer: nil) }
            return withExtendedLifetime(self) { ccurl_easy_perform(easy.handle) }
        }
        if let callbackError { throw callbackError }
        if cancelled { throw HTTPError.cancelled(url: url) }
        guard code == CURLE_OK else { throw transportError(code) }
        try deliverHeadIfNeeded()
        return head ?? HTTPResponseHead(status: easy.responseCode, headers: headers, effectiveURL: url)
    }

    func deliverHeadIfNeeded() throws {
        guard head == nil else { return }
        let delivered = HTTPResponseHead(
            status: easy.responseCode, headers: headers, effectiveURL: easy.effectiveURL ?? url)
        head = delivered
        try onHead(delivered)
    }

    func receiveHeaderLine(_ line: String) {
        let trimmed = line.trimmingWhitespaceAndNewlines()
        if trimmed.hasPrefix("HTTP/") {
            headers.removeAll()  // a new response (after a redirect or a 100 Continue)
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = String(trimmed[..<colon])
            let value = trimmed[trimmed.index(after: colon)...].trimmingWhitespace()
            headers.append((name, value))
        }
    }

    private func transportError(_ code: CURLcode) -> HTTPError {
        let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var message = detail.isEmpty ? CurlEasy.describe(code) : detail
        // The place that failed: after a redirect, where it led (found by an attack: a TLS
        // failure there was said against the plain http URL asked for); a redirect not followed
        // is the asking server's.
        var failedURL = easy.effectiveURL ?? url
        switch code {
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND:
            message = "TLS error: \(message)"
        case CURLE_OPERATION_TIMEDOUT:
            message = "timed out: \(message)"
        case CURLE_UNSUPPORTED_PROTOCOL:
            // A redirect mapgate does not follow (to `file:`, or from https to plain http with the
            // machine's credentials): libcurl's words blame its own build ("not supported or
            // disabled in libcurl"; found by an attack), so the server's answer is named instead.
            if let location = headers.last(where: { $0.name.lowercased() == "location" })?.value, !location.isEmpty {
                // At most 200 code points (found by an attack: 200 characters of 450 combining
                // marks each printed a 90 KB line).
                let shown = TerminalText.capped(location, codePoints: 200)
                let target = location.lowercased()
                if !target.hasPrefix("http:") && !target.hasPrefix("https:") {
                    message = L.localized("the server redirected to %1$s, which mapgate does not follow (only http and https)", shown)
                    failedURL = url
                } else if target.hasPrefix("http:") && url.lowercased().hasPrefix("https:") {
                    message = L.localized("the server redirected from https to plain http (%1$s), which mapgate does not follow for this request", shown)
                    failedURL = url
                }
                // Else the place redirected to answered what libcurl refuses (not HTTP at all:
                // found by an attack, it was said as a redirect from https that never happened):
                // libcurl's words stand, and the place is named (the effective URL, below).
            }
        default:
            break
        }
        return .transport(code: Int(code.rawValue), message: message, url: failedURL)
    }
}

private func transfer(from userdata: UnsafeMutableRawPointer?) -> Transfer? {
    userdata.map { Unmanaged<Transfer>.fromOpaque($0).takeUnretainedValue() }
}

private let transferWrite: curl_write_callback = { data, size, count, userdata in
    let length = size * count
    guard let transfer = transfer(from: userdata) else { return 0 }
    guard length > 0 else { return 0 }
    guard let data else { return 0 }
    do {
        try transfer.deliverHeadIfNeeded()
        try transfer.onBody(UnsafeRawBufferPointer(start: data, count: length))
        return length
    } catch {
        transfer.callbackError = error
        return 0  // anything but `length` makes libcurl stop with CURLE_WRITE_ERROR
    }
}

private let transferHeader: curl_write_callback = { data, size, count, userdata in
    let length = size * count
    guard let transfer = transfer(from: userdata), let data else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    transfer.receiveHeaderLine(String(decoding: bytes, as: UTF8.self))
    return length
}

private let transferProgress: curl_xferinfo_callback = { userdata, total, now, _, _ in
    guard let transfer = transfer(from: userdata) else { return 1 }
    guard let progress = transfer.progress else { return 0 }
    if progress(Int64(now), Int64(total)) { return 0 }
    transfer.cancelled = true
    return 1
}
