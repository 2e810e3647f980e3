import CLinux
import FoundationEssentials
import MapGateBase
import MapGateTrust

/// The worker's half of a ``PackageSink``: turns a package's bytes into the MBTiles file being
/// written beside its destination, gunzipped on the fly when the payload starts with the gzip
/// magic bytes. It lives on the sink's worker queue (a ``ThreadBound``), which checks, in debug
/// builds, that nothing else touches it.
final class PackageUnpacker {
    let package: PackageReference
    let outputPath: String
    private let output: UnixFile
    private var inflater: GzipInflater?
    /// The first bytes, held until gzip can be told from SQLite.
    private var head = Data()
    private var isGzip: Bool?
    private(set) var outputBytes: Int64 = 0
    private var outputBuffer = Data()
    /// Where the output's bytes not yet handed to writeback start.
    private var writebackStart: Int64 = 0
    /// The first error of the bytes handed to it since the last ``reset()``: nothing more is unpacked.
    var failure: (any Error)?

    init(package: PackageReference, outputPath: String) throws {
        self.package = package
        self.outputPath = outputPath
        do {
            output = try PartialFile.open(outputPath)
            try output.truncate(atOffset: 0)
        } catch {
            throw RegionError(region: package.id, reason: errorMessage(error), kind: .io)
        }
    }

    deinit {
        try? output.close()
    }

    /// Starts the output over, empty.
    func reset() throws {
        failure = nil
        try output.truncate(atOffset: 0)
        outputBytes = 0
        writebackStart = 0
        outputBuffer.removeAll(keepingCapacity: true)
        inflater = nil
        isGzip = nil
        head = Data()
    }

    /// The package's next bytes.
    func unpack(_ bytes: UnsafeRawBufferPointer) throws {
        guard isGzip != nil else {
            // Hold the first bytes until gzip can be told from SQLite by its magic number.
            head.append(contentsOf: bytes)
            guard head.count >= 2 else { return }
            try decideFormat()
            return
        }
        try inflate(bytes)
    }

    private func decideFormat() throws {
        isGzip = GzipInflater.isGzip(head)
        // The trailer's CRC-32 is not computed: the SHA-256 of the same bytes, which the sink
        // checks against the catalog, covers every byte of the package.
        if isGzip == true { inflater = try GzipInflater(verifiesTrailer: false) }
        let first = head
        head = Data()
        try first.withUnsafeBytes { try inflate($0) }
    }

    private func inflate(_ bytes: UnsafeRawBufferPointer) throws {
        guard let inflater else { return try emit(bytes) }
        do {
            try inflater.inflate(bytes) { try emit($0) }
        } catch let error as GzipError {
            throw RegionError(region: package.id, reason: errorMessage(error), kind: .badData)
        }
    }

    private func emit(_ bytes: UnsafeRawBufferPointer) throws {
        outputBytes += Int64(bytes.count)
        guard outputBytes <= package.installedSize else {
            throw RegionError(
                region: package.id,
                reason: L.localized("the package unpacks to more than the %1$s bytes the catalog declares (installedSize)", "\(package.installedSize)"),
                kind: .badData)
        }
        // The inflater hands out whole 256 KiB buffers, written as they are; smaller pieces (an
        // uncompressed package's first bytes, the inflater's last) are gathered first.
        if outputBuffer.isEmpty, bytes.count >= PackageSink.chunkSize {
            try writeOutput(bytes)
        } else {
            outputBuffer.append(contentsOf: bytes)
            if outputBuffer.count >= PackageSink.chunkSize { try flushOutput() }
        }
    }

    private func flushOutput() throws {
        guard !outputBuffer.isEmpty else { return }
        try outputBuffer.withUnsafeBytes { try writeOutput($0) }
        outputBuffer.removeAll(keepingCapacity: true)
    }

    /// Writes to the region file; every byte emitted before these is written already.
    private func writeOutput(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try output.write(contentsOf: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none))
        } catch {
            throw RegionError(region: package.id, reason: L.localized("cannot write the region file %1$s: %2$s", "\(outputPath)", "\(errorMessage(error))"), kind: .io)
        }
        // Start writing what is done back to disk as it goes, so the fsync before install has
        // little left to do. Only a hint: an error here changes nothing.
        if outputBytes - writebackStart >= 8 << 20 {
            _ = clinux_start_writeback(output.fileDescriptor, off_t(writebackStart), off_t(outputBytes - writebackStart))
            writebackStart = outputBytes
        }
    }

    /// After the package's last byte (its size and hash checked): the gzip trailer, the rest of
    /// the output, and the file closed.
    func finish() throws {
        if isGzip == nil, !head.isEmpty { try decideFormat() }
        if let inflater {
            do {
                try inflater.finish { try emit($0) }
            } catch let error as GzipError {
                throw RegionError(region: package.id, reason: errorMessage(error), kind: .badData)
            }
        }
        try flushOutput()
        do {
            // Not fsynced here: the installer does that while the file's tiles are hashed.
            try output.close()
        } catch {
            throw RegionError(region: package.id, reason: L.localized("cannot write the region file %1$s: %2$s", "\(outputPath)", "\(errorMessage(error))"), kind: .io)
        }
    }
}
