import Dispatch
import FoundationEssentials
import MapGateBase
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// Where a package's bytes go as they stream in: the resumable partial file, the SHA-256 of
/// the download, and the MBTiles file being written beside its destination (gunzipped on the
/// fly when the payload starts with the gzip magic bytes).
///
/// Two threads share the work: the caller's (libcurl's) writes the partial file and hashes the
/// download; a worker queue unpacks and writes the MBTiles file (a ``PackageUnpacker``, which
/// only that queue touches: a ``ThreadBound`` checks it). At most `depth` chunks of 256 KiB wait
/// between them in a ``BoundedChannel``, so memory stays bounded whatever the package's size.
/// The MBTiles file's own SHA-256 is left to the installer, which computes it while another
/// thread hashes the tiles.
///
/// Not `Sendable`: the sink itself stays on the thread that downloads.
final class PackageSink {
    let package: PackageReference
    let partialPath: String
    let outputPath: String
    private let partial: UnixFile
    private let downloadHash: SHA256Hasher
    private(set) var downloadedBytes: Int64 = 0
    /// Bytes kept from an earlier, interrupted run (0 once the download starts over).
    private(set) var resumedBytes: Int64 = 0
    /// Whether the bytes came in more than one piece (a partial file replayed, a resumed
    /// answer): then a package that does not check out may be whole again from one answer.
    var isJoined = false
    /// Download bytes not yet handed to the worker.
    private var pending = Data()
    private let worker = DispatchQueue(label: "mapgate.package-unpack")
    private let unpacker: ThreadBound<PackageUnpacker>
    /// The chunks on their way to the worker while it runs; nil while it is idle.
    private var channel: BoundedChannel<Data>?
    private static let depth = 4
    static let chunkSize = 256 << 10

    init(package: PackageReference, partialPath: String, outputPath: String) throws {
        self.package = package
        self.partialPath = partialPath
        self.outputPath = outputPath
        downloadHash = try SHA256Hasher()
        do {
            partial = try PartialFile.open(partialPath)
        } catch {
            throw RegionError(region: package.id, reason: errorMessage(error), kind: .io)
        }
        unpacker = ThreadBound(try PackageUnpacker(package: package, outputPath: outputPath), queue: worker)
    }

    // No drain here: closing the channel lets the worker's loop end on its own, and the
    // unpacker (with its file) goes when the last of the two lets go of it.
    deinit {
        channel?.close()
        try? partial.close()
    }

    /// Feeds the bytes already in the partial file (from an earlier, interrupted run) through
    /// the hash and the decompressor, so the download can go on from where it stopped. Throws
    /// when those bytes do not unpack (a mirror served a damaged file then): the caller starts
    /// over rather than fail on them in every run. A read of them the disk fails throws
    /// ``UnreadablePartial``.
    func replayPartial() throws {
        func read() throws -> Data? {
            do {
                return try partial.read(upToCount: Self.chunkSize)
            } catch {
                throw UnreadablePartial(reason: errorMessage(error))
            }
        }
        try partial.seek(toOffset: 0)
        while let chunk = try read(), !chunk.isEmpty {
            try downloadHash.update(chunk)
            try hand(chunk)
            downloadedBytes += Int64(chunk.count)
        }
        resumedBytes = downloadedBytes
        isJoined = downloadedBytes > 0
        try drain()
    }

    /// A read of the partial file that the disk failed (EIO: a bad sector under it): what it
    /// holds cannot be replayed.
    struct UnreadablePartial: Error {
        var reason: String
    }

    /// Starts over: the server sent the whole file, or the partial could not be resumed.
    func restart() throws {
        // What the worker made of the old bytes no longer matters, nor its error.
        try? drain()
        pending.removeAll(keepingCapacity: true)
        try partial.truncate(atOffset: 0)
        repeated = 0
        repeatUntil = 0
        try worker.sync { try unpacker.value.reset() }
        downloadedBytes = 0
        resumedBytes = 0
        isJoined = false
        _ = try downloadHash.finalizeHex()
    }

    /// How far a whole answer to a resumed request repeats the bytes kept, checked instead of
    /// written (``expectRepeat()``), and up to where it must.
    private var repeated: Int64 = 0
    private var repeatUntil: Int64 = 0

    /// The answer from here on is the package from its first byte, of a length not said (a server
    /// that ignored the range, with no `Content-Length`): its first bytes must be those kept, and
    /// only what follows them is written. Found by an attack: a sign-in page sent this way threw
    /// the kept download away, and the run failed as bad data (65); whether such an answer is the
    /// package cannot be told from its head, and is told from its bytes.
    func expectRepeat() {
        repeated = 0
        repeatUntil = downloadedBytes
    }

    /// The answer's `Content-Encoding` (other than `identity`): the package compressed once more
    /// on its way (a proxy, or a server set to compress every answer), which mapgate does not ask for.
    var contentEncoding: String?

    /// Takes bytes from the network.
    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        var bytes = bytes
        if repeated < repeatUntil {
            let count = Int(min(Int64(bytes.count), repeatUntil - repeated))
            var kept = [UInt8](repeating: 0, count: count)
            let read = kept.withUnsafeMutableBytes { pread(partial.fileDescriptor, $0.baseAddress, count, off_t(repeated)) }
            guard read == count, kept.elementsEqual(bytes.prefix(count)) else {
                throw HTTPError.transport(
                    code: HTTPError.notTheFile,
                    message: L.localized(
                        "the server answered the resumed download with bytes other than the package's (a proxy, or a network that asks you to sign in?); try again later"),
                    url: package.url)
            }
            repeated += Int64(count)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[count...])
            if bytes.isEmpty { return }
        }
        guard downloadedBytes + Int64(bytes.count) <= package.size else {
            if let file = PackageDownloader.localPath(package.url) {
                throw RegionError(
                    region: package.id,
                    reason: L.localized("size mismatch: %1$s holds more than the %2$s bytes the catalog declares", file, "\(package.size)") + Self.copyAdvice,
                    kind: .badData)
            }
            var reason = L.localized("size mismatch: the server sent more than the %1$s bytes the catalog declares", "\(package.size)")
            if let contentEncoding {
                reason += L.localized(
                    " (the server sent it with Content-Encoding: %1$s, compressed once more on the way: a server or proxy that compresses every answer)",
                    TerminalText.inline(String(contentEncoding.prefix(40))))
            }
            throw RegionError(region: package.id, reason: reason, kind: .badData)
        }
        // Written at once, so that a run killed now resumes after these bytes.
        do {
            try partial.write(contentsOf: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none))
        } catch {
            throw RegionError(region: package.id, reason: L.localized("cannot write the partial download %1$s: %2$s", "\(partialPath)", "\(errorMessage(error))"), kind: .io)
        }
        downloadedBytes += Int64(bytes.count)
        try downloadHash.update(bytes)
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize {
            try hand(pending)
            pending = Data(capacity: Self.chunkSize)
        }
    }

    /// Gives a chunk to the worker (started when idle), waiting while `depth` chunks are already
    /// queued. Throws the worker's first error, so a bad package stops the download early.
    private func hand(_ chunk: Data) throws {
        try (channel ?? startWorker()).send(chunk)
    }

    /// Starts the worker's loop: it unpacks each chunk until the channel is closed. Its first
    /// error stays with the unpacker and fails the channel, so the next `send` throws it.
    private func startWorker() -> BoundedChannel<Data> {
        let channel = BoundedChannel<Data>(capacity: Self.depth)
        self.channel = channel
        worker.async { [unpacker] in
            let unpacker = unpacker.value
            do {
                if let failure = unpacker.failure { throw failure }
                while let chunk = try channel.receive() {
                    try chunk.withUnsafeBytes { try unpacker.unpack($0) }
                }
            } catch {
                unpacker.failure = unpacker.failure ?? error
                channel.fail(error)
            }
        }
        return channel
    }

    /// Waits until the worker has unpacked every chunk handed to it; throws its first error.
    private func drain() throws {
        channel?.close()
        channel = nil
        try worker.sync {
            if let failure = unpacker.value.failure { throw failure }
        }
    }

    /// What to do about a mirror's package that is not the one its catalog names: the words for
    /// the user of a stick, who cannot mend the file (found by an attack: "size mismatch" said
    /// what was wrong and not what to do).
    static var copyAdvice: String {
        L.localized(
            "; this copy of the file is not the one the mirror's catalog names (copied while it was being written, or damaged): copy the mirror again from the machine that wrote it, or write it again there with 'mapgate mirror'"
        )
    }

    /// Why a package that ended after `got` bytes is refused: said of the file by its path when
    /// it is one (a mirror's), of the answer otherwise.
    static func shortReason(_ package: PackageReference, got: Int64) -> String {
        if let file = PackageDownloader.localPath(package.url) {
            // What the file holds now (found by an attack: a file cut short while it was read
            // was said to hold the bytes read before, not what it holds).
            let holds = FileIdentity(path: file)?.size ?? got
            return L.localized("size mismatch: %1$s holds %2$s bytes, the catalog declares %3$s", file, "\(holds)", "\(package.size)") + copyAdvice
        }
        return L.localized("size mismatch: got %1$s bytes, the catalog declares %2$s", "\(got)", "\(package.size)")
    }

    /// After the last byte: checks size, hash and the gzip trailer, and flushes the output.
    func finish() throws {
        if !pending.isEmpty {
            try hand(pending)
            pending = Data()
        }
        try drain()
        guard downloadedBytes == package.size else {
            throw RegionError(region: package.id, reason: Self.shortReason(package, got: downloadedBytes), kind: .badData)
        }
        let hash = try downloadHash.finalizeHex()
        guard hash == package.sha256 else {
            // A file on a stick or share is named by its path (found by an attack: which file of
            // the mirror was bad was left for the user to find).
            let reason =
                PackageDownloader.localPath(package.url).map {
                    L.localized("hash mismatch: the SHA-256 of %1$s is %2$s, the catalog declares %3$s", $0, hash, package.sha256) + Self.copyAdvice
                }
                ?? L.localized("hash mismatch: SHA-256 is %1$s, the catalog declares %2$s", "\(hash)", "\(package.sha256)")
            throw RegionError(region: package.id, reason: reason, kind: .badData)
        }
        try worker.sync { try unpacker.value.finish() }
    }
}
