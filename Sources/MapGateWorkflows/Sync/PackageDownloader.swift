import FoundationEssentials
import MapGateBase
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// Downloads one package (a region's, a delta, a style's) into the partial folder: resumable, retried, verified by size
/// and SHA-256 and gunzipped while it streams.
public struct PackageDownloader: Sendable {
    public var client: HTTPClient
    public var retry: RetryPolicy
    /// A transfer slower than this many bytes/s for `stallSeconds` fails as stalled (and is retried).
    public var stallBytesPerSecond: Int
    public var stallSeconds: Int

    public init(client: HTTPClient, retry: RetryPolicy = RetryPolicy(), stallBytesPerSecond: Int = 1024, stallSeconds: Int = 30) {
        self.client = client
        self.retry = retry
        self.stallBytesPerSecond = stallBytesPerSecond
        self.stallSeconds = stallSeconds
    }

    /// What a finished download produced: the unpacked MBTiles file beside its destination.
    struct Download {
        var outputPath: String
        var resumedFrom: Int64
    }

    /// The validator saved beside a partial file, so a resumed request can say `If-Range`.
    private struct PartialInfo: Codable {
        var url: String
        var etag: String?
        var lastModified: String?

        /// What `If-Range` names: a strong ETag, else the date (RFC 9110 §13.1.5 forbids a weak
        /// ETag there, and a server that keeps to it sends the whole file again), else the weak
        /// ETag all the same (at worst the whole file comes again).
        var ifRangeValidator: String? {
            let etag = HTTPValidator.entityTag(etag)
            if let etag, !etag.hasPrefix("W/") { return etag }
            return HTTPValidator.date(lastModified) ?? etag
        }
    }

    /// - Parameter others: the region's other packages in the catalog (its full package beside a
    ///   delta, its deltas beside the full package), whose partials are kept too.
    func download(
        _ package: PackageReference, into directory: DataDirectory, keeping others: [PackageReference] = [], progress: @escaping (Int64, Int64) -> Void
    ) throws -> Download {
        let partialPath = Self.partialPath(package, in: directory)
        let infoPath = partialPath + ".json"
        let outputPath = directory.installingPath(package.id)
        removeStalePartials(of: package, keeping: [partialPath] + others.map { Self.partialPath($0, in: directory) }, in: directory)

        var info = PartialFile.read(infoPath, limit: 64 << 10).flatMap { try? JSONDecoder().decode(PartialInfo.self, from: $0) }
        // Kept without a user name or password (found by an attack: a mirror's password stayed in
        // the partial file's record, readable by all).
        if info?.url != URLCredentials.removed(from: package.url) { info = nil }
        let sink = try PackageSink(package: package, partialPath: partialPath, outputPath: outputPath)
        // A mirror's file is named by its hash: what was copied of it is resumed (the whole is
        // checked against the catalog's SHA-256 all the same).
        let isFile = package.url.lowercased().hasPrefix("file:")
        if info?.ifRangeValidator == nil && !(isFile && info != nil) {
            try sink.restart()  // nothing to check a resumed range against: start over
        }
        do {
            try sink.replayPartial()
        } catch let error as RegionError where error.kind == .badData {
            // What an earlier run kept does not unpack: start over instead of failing on it again.
            try sink.restart()
        } catch is PackageSink.UnreadablePartial {
            // Nor when the disk will not give it back (a bad sector under it; found by an attack:
            // a bare "input/output error", exit 1, on every run).
            try sink.restart()
        }
        if sink.downloadedBytes > package.size { try sink.restart() }

        var startedOver = false
        while true {
            do {
                try fetchRemaining(package, sink: sink, info: &info, infoPath: infoPath, progress: progress)
                try sink.finish()
                return Download(outputPath: outputPath, resumedFrom: sink.resumedBytes)
            } catch let error as RegionError where error.kind == .badData && sink.isJoined && !startedOver {
                // Joined from pieces (a partial an earlier run kept, an answer that resumed it)
                // and not the catalog's package: one piece may be what was wrong (a server or
                // proxy that sent the wrong bytes for a range, a partial damaged on the disk).
                // Once, the whole package again in one answer, before it is called bad (found by
                // an attack: the run failed, and only the next one succeeded).
                startedOver = true
                try sink.restart()
                info = nil
                try? FileManager.default.removeItem(atPath: infoPath)
            } catch {
                // Only a resumable partial may stay behind, and only when the package may be good and
                // something of it arrived (a 404 leaves nothing).
                try? FileManager.default.removeItem(atPath: outputPath)
                if (error as? RegionError)?.kind == .badData || sink.downloadedBytes == 0 { discardPartial(package, in: directory) }
                throw error
            }
        }
    }

    /// Fetches until the partial file holds the whole package, retrying network errors and 5xx
    /// with backoff, never 4xx. The tries are counted from the last one that moved the download
    /// on by at least ``RetryPolicy/progressBytes`` (found by an attack: a link that drops every
    /// minute gave up after four tries while each had brought 60 KB), so a poor link that keeps
    /// making progress is never given up on, and one that brings nothing is after
    /// ``RetryPolicy/maxAttempts``.
    private func fetchRemaining(
        _ package: PackageReference, sink: PackageSink, info: inout PartialInfo?, infoPath: String,
        progress: @escaping (Int64, Int64) -> Void
    ) throws {
        var attempt = 0
        var tries = 0
        while sink.downloadedBytes < package.size {
            attempt += 1
            tries += 1
            let before = sink.downloadedBytes
            do {
                try fetch(package, sink: sink, info: &info, infoPath: infoPath, progress: progress)
            } catch let error as HTTPError where error.isTransient && (attempt < retry.maxAttempts || retry.isProgress(sink.downloadedBytes - before)) {
                if retry.isProgress(sink.downloadedBytes - before) { attempt = 1 }
                retry.sleep(retry.delay(afterAttempt: attempt))
                continue
            } catch let error as HTTPError {
                // A package on a stick that is a link, a FIFO or a device is refused for what it
                // is (65), not as a download that failed (69: a script would retry it).
                if case .notRegularFile = error { throw RegionError(region: package.id, reason: errorMessage(error), kind: .badData) }
                // A failure no retry can mend says so at once: a bad URL is the catalog's (65), a
                // missing local file or one that cannot be read is I/O (74); a redirect loop, a redirect to another protocol,
                // a certificate not trusted, a header line libcurl cannot hold are the server's or
                // the network's, as for the catalog (69; found by an attack: they were 65 here).
                var kind = error.kind
                if case .transport(let code, _, _) = error, !error.isTransient, [3, 26, 37].contains(code) {
                    // A URL libcurl cannot parse is the catalog's only when the catalog wrote it; a
                    // redirect's is the server's (found by an attack: 65 where the catalog's is 69).
                    kind = code == 3 ? (Self.isWellFormed(package.url) ? .unavailable : .badData) : .io
                }
                let reason =
                    tries == 1
                    ? L.localized("download failed: %1$s", "\(errorMessage(error))")
                    : L.localized("download failed: %1$s (after %2$s tries)", "\(errorMessage(error))", "\(tries)")
                throw RegionError(region: package.id, reason: reason, kind: kind)
            }
            if sink.downloadedBytes < package.size, let gone = localFileGone(package.url, read: sink.downloadedBytes, of: package.size) {
                // A file on a stick or share that ended early because it went away (pulled out,
                // unmounted, its FUSE driver gone) is an I/O error, and what was copied stays to
                // resume (found by an attack: libcurl reads a failed read as the end of the file,
                // and the run said the mirror's package was bad and threw the copy away).
                throw RegionError(region: package.id, reason: gone, kind: .io)
            }
            if sink.downloadedBytes < package.size {
                // The server finished its answer, and it is shorter than the catalog says.
                throw RegionError(region: package.id, reason: PackageSink.shortReason(package, got: sink.downloadedBytes), kind: .badData)
            }
        }
    }

    private func fetch(
        _ package: PackageReference, sink: PackageSink, info: inout PartialInfo?, infoPath: String, progress: @escaping (Int64, Int64) -> Void
    ) throws {
        var headers: [(name: String, value: String)] = []
        let offset = sink.downloadedBytes
        if offset > 0, !package.url.lowercased().hasPrefix("file:"), let validator = info?.ifRangeValidator {
            headers = [("Range", "bytes=\(offset)-"), ("If-Range", validator)]
        }
        var request = HTTPRequest(
            url: package.url, headers: headers, connectTimeout: 15, totalTimeout: nil, lowSpeedLimit: stallBytesPerSecond,
            lowSpeedTime: stallSeconds)
        let fromFile = package.url.lowercased().hasPrefix("file:")
        if fromFile { request.fileOffset = offset }
        try client.stream(
            request,
            onHead: { head in
                let url = package.url
                // file:// answers have no status; they always hold the whole file.
                let status = url.lowercased().hasPrefix("file:") ? 200 : head.status
                if status == 206, offset > 0, head.header("Content-Range")?.hasPrefix("bytes \(offset)-") == true {
                    // Resumed where the partial file ends.
                    sink.isJoined = true
                } else if fromFile, offset > 0 {
                    // Read from where the partial file ends (CURLOPT_RESUME_FROM).
                    sink.isJoined = true
                } else if status == 200 {
                    // A web page, or an answer of another size, is not the package: what was
                    // downloaded of it stays (found by an attack: a Wi-Fi login page threw the kept
                    // download away, and the run failed as bad data, 65).
                    if !fromFile, let reason = Self.notThePackage(head, size: package.size, resuming: sink.downloadedBytes > 0) {
                        throw HTTPError.transport(code: HTTPError.notTheFile, message: reason, url: url)
                    }
                    // The whole file: the server ignored the range, or the file changed (If-Range).
                    // Of a length not said, its first bytes must repeat those kept (it may be
                    // a sign-in page): checked as they come, the rest then written after them.
                    if sink.downloadedBytes > 0 {
                        let encoding = head.header("Content-Encoding")?.lowercased()
                        let saysItsLength = head.header("Content-Length") != nil && (encoding == nil || encoding == "identity")
                        if saysItsLength { try sink.restart() } else { sink.expectRepeat() }
                    }
                } else if status == 416 || status == 206 {
                    try sink.restart()
                    // Asked for the whole file, a part is no resume (found by an attack: "cannot resume at byte 0").
                    // Said as what the server did, not what comes next: it is also the reason the
                    // run gives after its last try ("…; trying again from the start (after 4 tries)").
                    let message =
                        offset == 0
                        ? L.localized("the server answered with a part (206) when asked for the whole file")
                        : L.localized("the server cannot resume at byte %1$s", "\(offset)")
                    throw HTTPError.transport(code: -2, message: message, url: url)
                } else {
                    // Named where it was answered: after a redirect, not the URL asked for (found by
                    // an attack: a 404 at the place redirected to blamed the server that redirected).
                    throw HTTPError.status(status, url: head.effectiveURL)
                }
                sink.contentEncoding = head.header("Content-Encoding").flatMap { $0.lowercased() == "identity" ? nil : $0 }
                // Saved at once, so a transfer cut short later can still be resumed.
                let validator = PartialInfo(
                    url: URLCredentials.removed(from: url), etag: HTTPValidator.entityTag(head.header("ETag")),
                    lastModified: HTTPValidator.date(head.header("Last-Modified")))
                info = validator
                // Atomic: replaces whatever stands at that name, never writes through a link.
                if let data = try? JSONEncoder().encode(validator) { try? AtomicFile.write(data, to: infoPath) }
            },
            progress: { _, _ in
                progress(sink.downloadedBytes, package.size)
                return true
            },
            onBody: { try sink.receive($0) })
    }

    /// Why a whole answer (200) cannot be the package of `size` bytes: a web page (a network's
    /// sign-in page), or, when `resuming` (a kept partial would be thrown away for it), a
    /// `Content-Length` of another size (with no `Content-Encoding`, which would count other
    /// bytes). Nil when it may be: a fresh download of another size is the catalog's mismatch
    /// (bad data), said once it is read.
    static func notThePackage(_ head: HTTPResponseHead, size: Int64, resuming: Bool) -> String? {
        let type = head.header("Content-Type")?.lowercased() ?? ""
        if type.hasPrefix("text/html") || type.hasPrefix("application/xhtml") {
            return L.localized(
                "the server answered with a web page (HTML), not the package: if this network asks you to sign in (a Wi-Fi login page), sign in and try again")
        }
        let encoding = head.header("Content-Encoding")?.lowercased()
        if resuming, encoding == nil || encoding == "identity", let length = head.header("Content-Length").flatMap({ Int64($0.trimmingWhitespace()) }), length != size {
            return L.localized(
                "the server answered with %1$s bytes where the package has %2$s (a proxy, or a network that asks you to sign in?); try again later", "\(length)", "\(size)")
        }
        return nil
    }

    /// Why the local (`file://`) file at `url` could not be read to its end, when that is not its
    /// being shorter than the catalog says: it is no longer there, or no longer readable (the
    /// system's reason), or it is whole and the reading stopped (a read error). Nil for a file that
    /// is there and short (bad data), and for any other URL.
    func localFileGone(_ url: String, read: Int64, of size: Int64) -> String? {
        guard let path = Self.localPath(url) else { return nil }
        let info: LocalFileStatus
        do {
            info = try client.localStatus(path)
        } catch {
            return L.localized(
                "%1$s could no longer be read after %2$s of %3$s bytes: %4$s (was the stick or share taken away?); what was copied is kept, and the next run resumes",
                path, "\(read)", "\(size)", SystemErrorReason.text(error.code))
        }
        guard info.size >= size else { return nil }
        return L.localized(
            "reading %1$s stopped at byte %2$s of %3$s (a read error: was the stick or share taken away?); what was copied is kept, and the next run resumes",
            path, "\(read)", "\(size)")
    }

    /// Whether `url` has a host and, if it names one, a port of 1–65535: what libcurl can parse.
    package static func isWellFormed(_ url: String) -> Bool {
        guard let components = URLComponents(string: url) else { return false }
        if components.scheme?.lowercased() == "file" { return true }
        guard components.host?.isEmpty == false else { return false }
        return components.port.map { (1...65535).contains($0) } ?? true
    }

    /// The path a `file://` URL names; nil for any other URL.
    static func localPath(_ url: String) -> String? {
        url.lowercased().hasPrefix("file:") ? URL(string: url)?.path : nil
    }

    /// Asks for the package's first byte, so that a package that is not there (a 4xx such as 404)
    /// fails before the gate counts a use. A failure a retry may mend passes: the download retries
    /// it. Local (`file://`) packages are checked by ``RegionInstaller/checkSource(of:in:)``.
    func probe(_ package: PackageReference) throws {
        guard !package.url.lowercased().hasPrefix("file:") else { return }
        struct HeadSeen: Error {}
        let request = HTTPRequest(
            url: package.url, headers: [("Range", "bytes=0-0")], connectTimeout: 15, totalTimeout: 30, lowSpeedLimit: stallBytesPerSecond,
            lowSpeedTime: stallSeconds)
        var status = 0
        do {
            try client.stream(request, onHead: { head in
                status = head.status
                throw HeadSeen()
            }, onBody: { _ in })
        } catch is HeadSeen {
        } catch {
            return  // the download tries again, with its retries, and says what failed
        }
        let error = HTTPError.status(status, url: package.url)
        guard (400..<500).contains(status), status != 416, !error.isTransient else { return }
        throw RegionError(region: package.id, reason: L.localized("download failed: %1$s", "\(errorMessage(error))"), kind: .unavailable)
    }

    static func partialPath(_ package: PackageReference, in directory: DataDirectory) -> String {
        directory.downloadPath(package.id, sha256: package.sha256)
    }

    func discardPartial(_ package: PackageReference, in directory: DataDirectory) {
        let path = Self.partialPath(package, in: directory)
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + ".json")
    }

    /// Partials of another version of the same region can never be resumed: remove them. Those
    /// of the catalog's other packages of the region stay (found by an attack: a delta that kept
    /// failing was downloaded again in each run and removed the full package's partial, so over a
    /// link that dropped the full package never finished).
    private func removeStalePartials(of package: PackageReference, keeping paths: [String], in directory: DataDirectory) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.partialPath)) ?? []
        let kept = paths.map { PathText.lastComponent($0) }
        for name in names where LeftoverFiles.isPartial(name, of: package.id) && !kept.contains(where: { name.hasPrefix($0) }) {
            try? FileManager.default.removeItem(atPath: directory.partialPath + "/" + name)
        }
    }
}
