import CZlib
import FoundationEssentials

/// A gzip stream that could not be decompressed, or not within a limit.
public struct GzipError: MapGateFailure, LocalizedError, Sendable {
    public let message: String
    /// The data inflates to more than the caller's limit (a gzip bomb, or simply too large).
    public private(set) var isOverLimit = false
    public var kind: FailureKind { .badData }
    public var errorDescription: String? { message }

    init(message: String) { self.message = message }
    init(corrupt reason: String) { message = L.localized("corrupt gzip data: %1$s", "\(reason)") }
    init(unpacksToMoreThan limit: Int) {
        message = L.localized("the gzip data unpacks to more than %1$s bytes", "\(limit)")
        isOverLimit = true
    }
}

/// Incremental gzip decompression over zlib, fed chunk by chunk while a download streams.
///
/// Owns one `z_stream` at a fixed address (zlib keeps a pointer back to it), ended in `deinit`.
/// Concatenated gzip members are decompressed one after the other, as `gunzip` does. Output is
/// handed out in whole buffers of `bufferSize` bytes (the rest by `finish(sink:)`), so that a
/// caller writing it to a file needs no buffer of its own.
public final class GzipInflater {
    public static let bufferSize = 256 << 10
    private let stream: UnsafeMutablePointer<z_stream>
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: GzipInflater.bufferSize, alignment: 64)
    /// How many bytes of `output` hold data not handed out yet.
    private var filled = 0
    private let verifiesTrailer: Bool
    /// True once the last member ended and no input followed it.
    public private(set) var isFinished = false
    private var memberEnded = false

    /// `verifiesTrailer: false` skips each member's CRC-32 and length check (zlib's
    /// `inflateValidate`), which costs a tenth of the inflating time: for input whose every byte
    /// is checked against a stronger hash anyway, as a package against its SHA-256.
    /// `zlib: true` reads a zlib stream (RFC 1950, as some older tools stored `pbf` tiles) instead of gzip.
    public init(verifiesTrailer: Bool = true, zlib: Bool = false) throws {
        self.verifiesTrailer = verifiesTrailer
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 16 + MAX_WBITS: a gzip wrapper, not zlib or raw deflate (MAX_WBITS alone: zlib's).
        let code = czlib_inflate_init2(stream, zlib ? MAX_WBITS : 16 + MAX_WBITS)
        // Every stored property is set by now, so a throw runs `deinit`, which frees both
        // buffers (and `inflateEnd` refuses a stream that never started).
        guard code == Z_OK else { throw GzipError(message: L.localized("zlib could not start (code %1$s)", "\(code)")) }
        if !verifiesTrailer { inflateValidate(stream, 0) }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// True when `bytes` start with the gzip magic number `1F 8B`.
    public static func isGzip<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1F && iterator.next() == 0x8B
    }

    /// True when `bytes` start with a zlib stream's header (RFC 1950): deflate (`CMF` 0x78) with a
    /// valid check (`CMF·256 + FLG` a multiple of 31). Some older tools stored `pbf` tiles so.
    public static func isZlib<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var iterator = bytes.makeIterator()
        guard let cmf = iterator.next(), let flg = iterator.next() else { return false }
        return cmf == 0x78 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }

    /// Decompresses `input`, handing each full buffer of output to `sink`.
    public func inflate(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress, input.count > 0 else { return }
        var offset = 0
        while offset < input.count {
            if memberEnded {
                // Another gzip member follows the one that ended.
                inflateReset(stream)
                if !verifiesTrailer { inflateValidate(stream, 0) }
                memberEnded = false
                isFinished = false
            }
            let remaining = input.count - offset
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: base.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(remaining)
            try drain(sink: sink)
            offset += remaining - Int(stream.pointee.avail_in)
        }
    }

    private func drain(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var isFull: Bool
        repeat {
            let room = output.count - filled
            stream.pointee.next_out = output.baseAddress!.advanced(by: filled).assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(room)
            let code = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = room - Int(stream.pointee.avail_out)
            filled += produced
            isFull = filled == output.count
            if isFull {
                try sink(UnsafeRawBufferPointer(output))
                filled = 0
            }
            switch code {
            case Z_OK:
                break
            case Z_BUF_ERROR:
                if produced == 0 { return }  // no progress possible until more input comes
            case Z_STREAM_END:
                memberEnded = true
                isFinished = true
                return
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                throw GzipError(corrupt: reason)
            }
        } while isFull || stream.pointee.avail_in > 0 && !memberEnded
    }

    /// Decompresses a whole gzip (or zlib: ``isZlib(_:)``) buffer held in memory (a `pbf` tile).
    /// Throws as soon as the output would pass `maximumSize` bytes: a few kilobytes of deflate can
    /// unpack to gigabytes.
    public static func decompress(_ data: Data, maximumSize: Int = .max) throws -> Data {
        let inflater = try GzipInflater(zlib: !isGzip(data) && isZlib(data))
        var output = Data()
        let sink = { (bytes: UnsafeRawBufferPointer) in
            guard bytes.count <= maximumSize - output.count else {
                throw GzipError(unpacksToMoreThan: maximumSize)
            }
            output.append(contentsOf: bytes)
        }
        try data.withUnsafeBytes { try inflater.inflate($0, sink: sink) }
        try inflater.finish(sink: sink)
        return output
    }

    /// Throws unless the stream ended cleanly (a cut-short file fails here), then hands the
    /// output not handed out yet to `sink`.
    public func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard isFinished else { throw GzipError(corrupt: L.localized("the stream ends before the gzip trailer")) }
        if filled > 0 {
            try sink(UnsafeRawBufferPointer(rebasing: output[0..<filled]))
            filled = 0
        }
    }
}
