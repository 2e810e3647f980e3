import FoundationEssentials
import MapGateBase
import MapGateWorkflows

#if canImport(Glibc)
import Glibc
#endif

/// `serve --share DIR`: a mirror (``MirrorLayout``) offered read-only at
/// ``MirrorLayout/sharePath`` so that machines on the LAN `sync --from` it. Only the mirror's own
/// names are answered (the catalog, its signature, the manifest, `packages/SHA256`), each a
/// regular file opened without following a symbolic link: never the state, the policy or
/// anything else in or outside the folder. Single byte ranges are honoured (206, or 416), so a
/// cut transfer resumes; `If-Range` with an old validator gets the whole file.
public final class MirrorShare: Sendable {
    public let folder: String

    public init(folder: String) {
        self.folder = folder
    }

    func respond(_ name: String, _ request: HTTPServerRequest) -> HTTPServerResponse {
        guard MirrorLayout.isMirrorFile(name), let opened = open(name) else {
            return HTTPServerResponse(
                status: 404, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Data("not in this mirror: \(name)\n".utf8))
        }
        let (descriptor, info) = opened
        let size = Int(info.st_size)
        let isPackage = name.hasPrefix(MirrorLayout.packagesFolder + "/")
        let etag = isPackage ? "\"\(name.dropFirst(MirrorLayout.packagesFolder.count + 1))\"" : "\"\(info.st_ino)-\(size)-\(info.st_mtim.tv_sec)\""
        let lastModified = HTTPDate.string(Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)))
        var headers: [(name: String, value: String)] = [
            ("Content-Type", name.hasSuffix(".json") ? "application/json" : "application/octet-stream"),
            ("Accept-Ranges", "bytes"), ("ETag", etag), ("Last-Modified", lastModified),
            ("Cache-Control", isPackage ? "public, max-age=31536000, immutable" : "no-cache"),
        ]
        var range: ClosedRange<Int>?
        if let text = request.header("Range"), Self.validatorMatches(request.header("If-Range"), etag: etag, lastModified: lastModified) {
            switch Self.parseRange(text, size: size) {
            case .whole: break
            case .part(let part): range = part
            case .unsatisfiable:
                Glibc.close(descriptor)
                headers.append(("Content-Range", "bytes */\(size)"))
                return HTTPServerResponse(status: 416, headers: headers)
            }
        }
        let start = range?.lowerBound ?? 0
        let length = range.map { $0.count } ?? size
        if let range { headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(size)")) }
        return HTTPServerResponse(status: range == nil ? 200 : 206, headers: headers, length: length, stream: FileBody(descriptor: descriptor, start: start))
    }

    /// Opens `name` under the folder without following a link at any step, as a regular file.
    private func open(_ name: String) -> (Int32, stat)? {
        var directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return nil }
        var parts = name.split(separator: "/").map(String.init)
        let last = parts.removeLast()
        for part in parts {
            let next = openat(directory, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            Glibc.close(directory)
            guard next >= 0 else { return nil }
            directory = next
        }
        // O_NONBLOCK: a FIFO put there is opened without waiting for a writer, then refused.
        let descriptor = openat(directory, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        Glibc.close(directory)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            return nil
        }
        return (descriptor, info)
    }

    enum RangeAnswer: Equatable {
        case whole
        case part(ClosedRange<Int>)
        case unsatisfiable
    }

    /// One `bytes=` range (`a-b`, `a-`, `-n`) of a file of `size` bytes. Several ranges, or a
    /// header that is not one, get the whole file (as RFC 9110 allows).
    static func parseRange(_ text: String, size: Int) -> RangeAnswer {
        guard text.hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return .whole }
        let first = String(spec[0]).trimmingWhitespace()
        let second = String(spec[1]).trimmingWhitespace()
        // Digits only; more than fit in an Int are a number past any file (a range to the end:
        // `bytes=0-99999999999999999999` is the whole file as a 206, RFC 9110 §14.1.2).
        func number(_ text: String) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            // Leading zeros count for nothing (`bytes=0000000000000000000005-10` is bytes 5-10).
            let digits = text.drop { $0 == "0" }
            return digits.utf8.count <= 18 ? Int(digits.isEmpty ? "0" : String(digits)) : Int.max
        }
        if first.isEmpty {
            guard let suffix = number(second) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let start = number(first) else { return .whole }
        guard start < size else { return .unsatisfiable }
        if second.isEmpty { return .part(start...(size - 1)) }
        guard let end = number(second), end >= start else { return .whole }
        return .part(start...min(end, size - 1))
    }

    /// A range is honoured without `If-Range`, or when it names this file's ETag or date.
    static func validatorMatches(_ ifRange: String?, etag: String, lastModified: String) -> Bool {
        guard let ifRange else { return true }
        return ifRange == etag || ifRange == lastModified
    }
}

/// A file's bytes from `start`, read with `pread` as the client takes them; closed when the
/// answer is done with.
final class FileBody: HTTPBodyStream {
    private let descriptor: Int32
    private let start: Int

    init(descriptor: Int32, start: Int) {
        self.descriptor = descriptor
        self.start = start
    }

    deinit { Glibc.close(descriptor) }

    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> HTTPBodyChunk {
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(start + offset))
            if count < 0, errno == EINTR { continue }
            // The file shrank or cannot be read: the connection is cut, never padded.
            return count > 0 ? .bytes(count) : .abort
        }
    }
}
