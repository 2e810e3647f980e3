import FoundationEssentials

/// A request that failed: at the transport (curl) level, or with an HTTP error status.
public enum HTTPError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// libcurl failed: its error code, its message and the URL.
    case transport(code: Int, message: String, url: String)
    /// The server answered with a status the caller does not accept.
    case status(Int, url: String)
    /// The caller stopped the transfer (from a progress callback).
    case cancelled(url: String)
    /// The body was larger than the caller accepts.
    case tooLarge(limit: Int, url: String)
    /// A `file://` URL that names no regular file of its own (a FIFO, which would block the reader
    /// for ever, a device, a folder, or a symbolic link out of a mirror's folder): `reason` says which.
    case notRegularFile(reason: String, url: String)

    public var kind: FailureKind {
        switch self {
        case .tooLarge, .notRegularFile: .badData
        case .transport(let code, _, _) where code == Self.localReadFailure: .io
        default: .unavailable
        }
    }

    /// mapgate's own code for a local (`file://`) file that could not be read to its end while
    /// its size says there is more: a read error (a stick pulled out, a failing card), I/O.
    public static let localReadFailure = -3

    /// mapgate's own code for a whole answer (200) that cannot be the file asked for: a web page,
    /// or another size than the file's. The network's doing (a Wi-Fi login page, a proxy), not the
    /// publisher's, and not retried at once.
    public static let notTheFile = -4

    /// libcurl errors that may pass on a retry: a name that did not resolve, a connection that
    /// failed, was cut or timed out, a TLS handshake that broke off. Not an unsupported protocol
    /// (a redirect to `file://`), a redirect loop, a missing `file://` path or a bad certificate:
    /// those say what happened at once. (-2 is ours: a server that cannot resume.)
    static let transientCurlCodes: Set<Int> = [-2, 5, 6, 7, 16, 18, 28, 35, 52, 55, 56, 92]

    /// Whether trying again later might succeed (network errors and 5xx, not 4xx).
    public var isTransient: Bool {
        switch self {
        case .transport(let code, _, _): Self.transientCurlCodes.contains(code)
        case .status(let code, _): code >= 500 || code == 408 || code == 429
        case .cancelled, .tooLarge, .notRegularFile: false
        }
    }

    /// The common network failures in a sentence of the user's language (issue 37); libcurl's
    /// own words follow it in every message. Nil for the others, said in libcurl's words alone.
    public static func sentence(forCurlCode code: Int) -> String? {
        switch code {
        case 5, 6: L.localized("the host name cannot be resolved (no network, or no name server)")
        case 7: L.localized("the server cannot be reached or refused the connection")
        case 28: L.localized("the server did not answer in time, or too slowly")
        case 35, 53, 54, 58, 59, 66, 80, 83, 90, 91: L.localized("the secure (TLS) connection failed")
        case 60, 51: L.localized("the server's certificate is not trusted")
        case 18, 52, 55, 56, 92: L.localized("the connection was cut off")
        // libcurl says "Out of memory" when a header line is over its 100 KB (CURL_MAX_HTTP_HEADER).
        case 27: L.localized("the server sent a header line over 100 KB, or this machine is out of memory")
        default: nil
        }
    }

    /// What went wrong without the URL, for a message that already names it.
    public var reason: String {
        switch self {
        // A negative code is mapgate's own, no libcurl error to name (found by an attack: "curl error -2").
        case .transport(let code, let message, _) where code < 0:
            message
        case .transport(let code, let message, _):
            Self.sentence(forCurlCode: code).map { L.localized("%1$s (%2$s, curl error %3$s)", $0, message, "\(code)") } ?? "\(message) (curl error \(code))"
        case .status(let code, _): "HTTP \(code)"
        case .cancelled: "transfer cancelled"
        case .tooLarge(let limit, _): "larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes")"
        case .notRegularFile(let reason, _): reason
        }
    }

    public var errorDescription: String? {
        switch self {
        case .transport(let code, let message, let url) where code < 0:
            "\(url): \(message)"
        case .transport(let code, let message, let url):
            if let sentence = Self.sentence(forCurlCode: code) {
                L.localized("%1$s: %2$s (%3$s, curl error %4$s)", url, sentence, message, "\(code)")
            } else {
                L.localized("%1$s (curl error %2$s) for %3$s", "\(message)", "\(code)", "\(url)")
            }
        case .status(let code, let url):
            L.localized("HTTP %1$s from %2$s", "\(code)", "\(url)")
        case .cancelled(let url):
            L.localized("transfer of %1$s cancelled", url)
        case .tooLarge(let limit, let url):
            L.localized("%1$s is larger than %2$s", url, limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) B")
        case .notRegularFile(let reason, let url):
            "\(url) \(reason)"
        }
    }
}
