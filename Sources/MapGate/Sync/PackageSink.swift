import CLinux
import Dispatch
import FoundationEssentials
import Synchronization

/// Where a package's bytes go as they stream in: the resumable partial file, the SHA-256 of
/// the download, and the MBTiles file being written beside its destination (gunzipped on the
/// fly when the payload starts with the gzip magic bytes).
///
/// Two threads share the work: the caller's (libcurl's) writes the partial file and hashes the
/// download; a worker inflates and writes the MBTiles file. At most `depth` chunks of 256 KiB
/// wait between them, so memory stays bounded whatever the package's size. The MBTiles file's
/// own SHA-256 is left to the installer, which computes it while another thread hashes the tiles.
final class PackageSink: @unchecked Sendable {
    // Invariant: `partial`, `downloadHash`, `downloadedBytes`, `resumedBytes` and `pending` are
    // the caller's; `output`, `inflater`, `head`, `isGzip`, `outputBytes`, `writebackStart` and
    // `outputBuffer` belong to the worker queue, and the caller reads or resets them only after
    // `drain()`, when the worker is idle.
    let region: CatalogRegion
    let partialPath: String
    let outputPath: String
    private var partial: UnixFile
    private var output: UnixFile
    private let downloadHash: SHA256Hasher
    private var inflater: GzipInflater?
    /// The first bytes, held until gzip can be told from SQLite.
    private var head = Data()
    private var isGzip: Bool?
    private(set) var downloadedBytes: Int64 = 0
    /// Bytes kept from an earlier, interrupted run (0 once the download starts over).
    private(set) var resumedBytes: Int64 = 0
    private(set) var outputBytes: Int64 = 0
    private var outputBuffer = Data()
    /// Where the output's bytes not yet handed to writeback start.
    private var writebackStart: Int64 = 0
    /// Download bytes not yet handed to the worker.
    private var pending = Data()
    private let worker = DispatchQueue(label: "mapgate.package-unpack")
    private static let depth = 4
    private static let chunkSize = 256 << 10
    private let slots = DispatchSemaphore(value: PackageSink.depth)
    private let workerError = Locked<(any Error)?>(nil)

    init(region: CatalogRegion, partialPath: String, outputPath: String) throws {
        self.region = region
        self.partialPath = partialPath
        self.outputPath = outputPath
        downloadHash = try SHA256Hasher()
        do {
            partial = try PartialFile.open(partialPath)
            output = try PartialFile.open(outputPath)
            try output.truncate(atOffset: 0)
        } catch {
            throw RegionError(region: region.id, reason: errorMessage(error), kind: .io)
        }
    }

    // No drain here: every block queued on the worker holds the sink, so none is left by the
    // time it goes (and the last one may be ending on the worker itself, where a drain would
    // wait for its own queue).
    deinit {
        try? partial.close()
        try? output.close()
    }

    /// Feeds the bytes already in the partial file (from an earlier, interrupted run) through
    /// the hash and the decompressor, so the download can go on from where it stopped. Throws
    /// when those bytes do not unpack (a mirror served a damaged file then): the caller starts
    /// over rather than fail on them in every run.
    func replayPartial() throws {
        try partial.seek(toOffset: 0)
        while let chunk = try partial.read(upToCount: Self.chunkSize), !chunk.isEmpty {
            try downloadHash.update(chunk)
            try hand(chunk)
            downloadedBytes += Int64(chunk.count)
        }
        resumedBytes = downloadedBytes
        drain()
        if let error = workerError.withLock({ $0 }) { throw error }
    }

    /// Starts over: the server sent the whole file, or the partial could not be resumed.
    func restart() throws {
        drain()
        workerError.withLock { $0 = nil }
        pending.removeAll(keepingCapacity: true)
        try partial.truncate(atOffset: 0)
        try output.truncate(atOffset: 0)
        downloadedBytes = 0
        resumedBytes = 0
        outputBytes = 0
        writebackStart = 0
        outputBuffer.removeAll(keepingCapacity: true)
        inflater = nil
        isGzip = nil
        head = Data()
        _ = try downloadHash.finalizeHex()
    }

    /// Takes bytes from the network.
    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard downloadedBytes + Int64(bytes.count) <= region.size else {
            throw RegionError(region: region.id, reason: L.localized("size mismatch: the server sent more than the %1$s bytes the catalog declares", "\(region.size)"), kind: .badData)
        }
        // Written at once, so that a run killed now resumes after these bytes.
        try write(bytes, to: partial, what: "partial download")
        downloadedBytes += Int64(bytes.count)
        try downloadHash.update(bytes)
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize {
            try hand(pending)
            pending = Data(capacity: Self.chunkSize)
        }
    }

    /// Gives a chunk to the worker, waiting while `depth` chunks are already queued. Throws the
    /// worker's first error, so a bad package stops the download early.
    private func hand(_ chunk: Data) throws {
        if let error = workerError.withLock({ $0 }) { throw error }
        slots.wait()
        worker.async { [self] in
            defer { slots.signal() }
            guard workerError.withLock({ $0 }) == nil else { return }
            do {
                try chunk.withUnsafeBytes { try process($0) }
            } catch {
                workerError.withLock { $0 = $0 ?? error }
            }
        }
    }

    /// Waits until the worker has processed every chunk handed to it.
    private func drain() {
        worker.sync {}
    }

    private func process(_ bytes: UnsafeRawBufferPointer) throws {
        guard isGzip != nil else {
            // Hold the first bytes until gzip can be told from SQLite by its magic number.
            head.append(contentsOf: bytes)
            guard head.count >= 2 else { return }
            try decideFormat()
            return
        }
        try unpack(bytes)
    }

    private func decideFormat() throws {
        isGzip = GzipInflater.isGzip(head)
        // The trailer's CRC-32 is not computed: the SHA-256 of the same bytes, checked against the
        // catalog in `finish()`, covers every byte of the package.
        if isGzip == true { inflater = try GzipInflater(verifiesTrailer: false) }
        let first = head
        head = Data()
        try first.withUnsafeBytes { try unpack($0) }
    }

    private func unpack(_ bytes: UnsafeRawBufferPointer) throws {
        guard let inflater else { return try emit(bytes) }
        do {
            try inflater.inflate(bytes) { try emit($0) }
        } catch let error as GzipError {
            throw RegionError(region: region.id, reason: errorMessage(error), kind: .badData)
        }
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        outputBytes += Int64(bytes.count)
        guard outputBytes <= region.installedSize else {
            throw RegionError(
                region: region.id,
                reason: L.localized("the package unpacks to more than the %1$s bytes the catalog declares (installedSize)", "\(region.installedSize)"),
                kind: .badData)
        }
        // The inflater hands out whole 256 KiB buffers, written as they are; smaller pieces (an
        // uncompressed package's first bytes, the inflater's last) are gathered first.
        if outputBuffer.isEmpty, bytes.count >= Self.chunkSize {
            try writeOutput(bytes)
        } else {
            outputBuffer.append(contentsOf: bytes)
            if outputBuffer.count >= Self.chunkSize { try flushOutput() }
        }
    }

    private func flushOutput() throws {
        guard !outputBuffer.isEmpty else { return }
        try outputBuffer.withUnsafeBytes { try writeOutput($0) }
        outputBuffer.removeAll(keepingCapacity: true)
    }

    /// Writes to the region file; every byte emitted before these is written already.
    private func writeOutput(_ bytes: UnsafeRawBufferPointer) throws {
        try write(bytes, to: output, what: "region file")
        // Start writing what is done back to disk as it goes, so the fsync before install has
        // little left to do. Only a hint: an error here changes nothing.
        if outputBytes - writebackStart >= 8 << 20 {
            _ = clinux_start_writeback(output.fileDescriptor, off_t(writebackStart), off_t(outputBytes - writebackStart))
            writebackStart = outputBytes
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, to handle: UnixFile, what: String) throws {
        do {
            try handle.write(contentsOf: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none))
        } catch {
            let path = handle === partial ? partialPath : outputPath
            throw RegionError(region: region.id, reason: L.localized("cannot write the %1$s %2$s: %3$s", "\(what)", "\(path)", "\(errorMessage(error))"), kind: .io)
        }
    }

    /// After the last byte: checks size, hash and the gzip trailer, and flushes the output.
    func finish() throws {
        if !pending.isEmpty {
            try hand(pending)
            pending = Data()
        }
        drain()
        if let error = workerError.withLock({ $0 }) { throw error }
        guard downloadedBytes == region.size else {
            throw RegionError(region: region.id, reason: L.localized("size mismatch: got %1$s bytes, the catalog declares %2$s", "\(downloadedBytes)", "\(region.size)"), kind: .badData)
        }
        let hash = try downloadHash.finalizeHex()
        guard hash == region.sha256 else {
            throw RegionError(region: region.id, reason: L.localized("hash mismatch: SHA-256 is %1$s, the catalog declares %2$s", "\(hash)", "\(region.sha256)"), kind: .badData)
        }
        if isGzip == nil, !head.isEmpty { try decideFormat() }
        if let inflater {
            do {
                try inflater.finish { try emit($0) }
            } catch let error as GzipError {
                throw RegionError(region: region.id, reason: errorMessage(error), kind: .badData)
            }
        }
        try flushOutput()
        do {
            // Not fsynced here: the installer does that while the file's tiles are hashed.
            try output.close()
        } catch {
            throw RegionError(region: region.id, reason: L.localized("cannot write the region file %1$s: %2$s", "\(outputPath)", "\(errorMessage(error))"), kind: .io)
        }
    }
}
