import CZlib
import Foundation

/// A gzip stream that could not be decompressed.
public struct GzipError: MapGateFailure, LocalizedError, Sendable {
    public let message: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? { "corrupt gzip data: \(message)" }
}

/// Incremental gzip decompression over zlib, fed chunk by chunk while a download streams.
///
/// Owns one `z_stream` at a fixed address (zlib keeps a pointer back to it), ended in `deinit`.
/// Concatenated gzip members are decompressed one after the other, as `gunzip` does.
public final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var output = [UInt8](repeating: 0, count: 256 << 10)
    /// True once the last member ended and no input followed it.
    public private(set) var isFinished = false
    private var memberEnded = false

    public init() throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 16 + MAX_WBITS: a gzip wrapper, not zlib or raw deflate.
        let code = czlib_inflate_init2(stream, 16 + MAX_WBITS)
        guard code == Z_OK else {
            stream.deallocate()
            throw GzipError(message: "zlib could not start (code \(code))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// True when `bytes` start with the gzip magic number `1F 8B`.
    public static func isGzip<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1F && iterator.next() == 0x8B
    }

    /// Decompresses `input`, handing each piece of output to `sink`.
    public func inflate(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress, input.count > 0 else { return }
        var offset = 0
        while offset < input.count {
            if memberEnded {
                // Another gzip member follows the one that ended.
                inflateReset(stream)
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
        let capacity = output.count
        repeat {
            let (code, produced) = output.withUnsafeMutableBytes { buffer in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                let code = CZlib.inflate(stream, Z_NO_FLUSH)
                return (code, capacity - Int(stream.pointee.avail_out))
            }
            if produced > 0 {
                try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
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
                throw GzipError(message: reason)
            }
        } while stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0 && !memberEnded
    }

    /// Decompresses a whole gzip buffer held in memory (a `pbf` tile).
    public static func decompress(_ data: Data) throws -> Data {
        let inflater = try GzipInflater()
        var output = Data()
        try data.withUnsafeBytes { try inflater.inflate($0) { output.append(contentsOf: $0) } }
        try inflater.finish()
        return output
    }

    /// Throws unless the stream ended cleanly (a cut-short file fails here).
    public func finish() throws {
        guard isFinished else { throw GzipError(message: "the stream ends before the gzip trailer") }
    }
}
