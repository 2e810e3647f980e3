import FoundationEssentials
import MapGateBase
import MapGateStorage

#if canImport(Glibc)
import Glibc
#endif

/// Size and SHA-256 of a file written.
struct PackedFile: Sendable, Equatable {
    var size: Int64
    var sha256: String
}

/// Gzips a file into a package: deterministic (``GzipDeflater``), streamed in 1 MiB chunks, with
/// the SHA-256 of the output computed in the same pass. Compression runs on the calling thread;
/// hashing and writing the output run on another, so the two overlap on a machine with two cores.
enum PackageCompressor {
    static let chunkSize = 1 << 20

    /// Writes the gzip of `source` to `destination` (replaced if it exists). On failure nothing
    /// is left at `destination`. `progress` gets (bytes read, bytes in total). `restoringWAL`:
    /// `source` is an installed region whose package was in WAL mode, and its two header bytes
    /// are put back as they were (``SQLiteHeader/restoringWAL(_:)``).
    static func pack(
        _ source: String, to destination: String, restoringWAL: Bool = false, progress: (Int64, Int64) -> Void = { _, _ in }
    ) throws -> PackedFile {
        try pack(source, into: destination, restoringWAL: restoringWAL, progress: progress)
    }

    /// The size and SHA-256 the package of `source` would have, written nowhere: whether a
    /// package can be rebuilt, asked before its bytes go to a slow disk.
    static func digest(of source: String, restoringWAL: Bool = false, progress: (Int64, Int64) -> Void = { _, _ in }) throws -> PackedFile {
        try pack(source, into: nil, restoringWAL: restoringWAL, progress: progress)
    }

    private static func pack(_ source: String, into destination: String?, restoringWAL: Bool, progress: (Int64, Int64) -> Void) throws -> PackedFile {
        guard let input = UnixFile(forReadingAtPath: source) else {
            throw PublishError(source, L.localized("cannot read it"), kind: .io)
        }
        defer { try? input.close() }
        let total = FileManager.default.sizeOfItem(atPath: source)
        if let destination {
            try? FileManager.default.removeItem(atPath: destination)
            // Made here to say why it cannot be (found by an attack: a stick out of inodes or a
            // dead FUSE mount gave "cannot create it" alone).
            let made = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard made >= 0 else {
                throw PublishError(destination, L.localized("cannot create it: %1$s", SystemErrorReason.text(errno)), kind: .io)
            }
            close(made)
        }
        // At most 8 MiB of compressed chunks wait for the writer.
        let channel = BoundedChannel<Data>(capacity: 8)
        let writer = BackgroundJob<PackedFile> {
            do {
                return try write(channel, to: destination)
            } catch {
                // Wakes the compressor: its next send throws this, and it stops.
                let failure = PublishError(destination ?? source, L.localized("cannot write it: %1$s", "\(errorMessage(error))"), kind: .io)
                channel.fail(failure)
                throw failure
            }
        }
        do {
            try compress(input, into: channel, total: total, restoringWAL: restoringWAL, progress: progress)
        } catch {
            // The writer stops at once (what is queued is dropped); the first error is reported.
            channel.fail(error)
            _ = try? writer.wait()
            if let destination { try? FileManager.default.removeItem(atPath: destination) }
            throw error
        }
        channel.close()
        do {
            return try writer.wait()
        } catch {
            if let destination { try? FileManager.default.removeItem(atPath: destination) }
            throw error
        }
    }

    /// Throws the writer's failure as soon as it gives up.
    private static func compress(
        _ input: UnixFile, into channel: BoundedChannel<Data>, total: Int64, restoringWAL: Bool, progress: (Int64, Int64) -> Void
    ) throws {
        let deflater = try GzipDeflater()
        var pending = Data()
        var done: Int64 = 0
        while var chunk = try input.read(upToCount: chunkSize), !chunk.isEmpty {
            if restoringWAL, done == 0 { chunk = SQLiteHeader.restoringWAL(chunk) }
            try chunk.withUnsafeBytes { try deflater.compress($0) { pending.append(contentsOf: $0) } }
            if pending.count >= chunkSize {
                try channel.send(pending)
                pending = Data()
            }
            done += Int64(chunk.count)
            progress(done, total)
        }
        try deflater.finish { pending.append(contentsOf: $0) }
        if !pending.isEmpty { try channel.send(pending) }
    }

    /// Hashes what comes, and writes it to `destination` unless it is nil.
    private static func write(_ channel: BoundedChannel<Data>, to destination: String?) throws -> PackedFile {
        var output: UnixFile?
        if let destination {
            guard let opened = UnixFile(forWritingAtPath: destination) else {
                throw PublishError(destination, L.localized("cannot open it for writing"), kind: .io)
            }
            output = opened
        }
        defer { try? output?.close() }
        let hasher = try SHA256Hasher()
        var size: Int64 = 0
        while let chunk = try channel.receive() {
            try hasher.update(chunk)
            try output?.write(contentsOf: chunk)
            size += Int64(chunk.count)
        }
        try output?.synchronize()
        return PackedFile(size: size, sha256: try hasher.finalizeHex())
    }
}
