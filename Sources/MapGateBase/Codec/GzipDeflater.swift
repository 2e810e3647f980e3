import CZlib
import FoundationEssentials

/// Incremental, deterministic gzip compression over zlib, fed chunk by chunk.
///
/// The same input always gives the same bytes: the gzip header is fixed (no file name, no
/// comment, modification time 0, OS byte 3 "Unix") and the deflate settings are fixed (the
/// given level, a 32 KiB window, memory level 8, the default strategy). Owns one `z_stream` and
/// its header at fixed addresses (zlib keeps pointers to both), ended in `deinit`. Not `Sendable`.
public final class GzipDeflater {
    /// The level `gzip` uses by default.
    public static let defaultLevel: Int32 = 6
    /// The OS byte of the header: 3, Unix, whatever machine compresses.
    public static let operatingSystemByte: Int32 = 3

    private let stream: UnsafeMutablePointer<z_stream>
    private let header: UnsafeMutablePointer<gz_header>
    private var output = [UInt8](repeating: 0, count: 256 << 10)
    private var isFinished = false

    public init(level: Int32 = defaultLevel) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        header = .allocate(capacity: 1)
        header.initialize(to: gz_header())
        header.pointee.os = Self.operatingSystemByte
        // 16 + MAX_WBITS: a gzip wrapper; memory level 8 is zlib's default.
        var code = czlib_deflate_init2(stream, level, 16 + MAX_WBITS, 8)
        if code == Z_OK {
            code = deflateSetHeader(stream, header)
            if code != Z_OK { deflateEnd(stream) }
        }
        guard code == Z_OK else {
            stream.deallocate()
            header.deallocate()
            throw GeneralFailure(L.localized("gzip: zlib could not start compressing (code %1$s)", "\(code)"))
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        header.deallocate()
    }

    /// Compresses `input`, handing each piece of output to `sink`.
    public func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress, input.count > 0 else { return }
        guard !isFinished else { throw GeneralFailure(L.localized("gzip: compressing after the stream was finished")) }
        var offset = 0
        while offset < input.count {
            // avail_in is 32 bits: feed at most 1 GiB at a time.
            let length = min(input.count - offset, 1 << 30)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(length)
            try run(Z_NO_FLUSH, sink: sink)
            offset += length - Int(stream.pointee.avail_in)
        }
    }

    /// Writes what zlib still holds and the gzip trailer (CRC-32 and length).
    public func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !isFinished else { return }
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        try run(Z_FINISH, sink: sink)
        isFinished = true
    }

    private func run(_ flush: Int32, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let capacity = output.count
        while true {
            let (code, produced) = output.withUnsafeMutableBytes { buffer in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                let code = deflate(stream, flush)
                return (code, capacity - Int(stream.pointee.avail_out))
            }
            if produced > 0 {
                try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
            }
            switch code {
            case Z_STREAM_END:
                return
            case Z_OK, Z_BUF_ERROR:
                // Done with this input once zlib neither filled the buffer nor has input left.
                if flush == Z_NO_FLUSH, stream.pointee.avail_out > 0, stream.pointee.avail_in == 0 { return }
                if code == Z_BUF_ERROR, produced == 0 {
                    if flush == Z_NO_FLUSH { return }
                    throw GeneralFailure(L.localized("gzip: zlib made no progress finishing the stream"))
                }
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
                throw GeneralFailure(L.localized("gzip: zlib could not compress: %1$s", "\(reason)"))
            }
        }
    }

    /// Compresses a whole buffer held in memory.
    public static func compress(_ data: Data, level: Int32 = defaultLevel) throws -> Data {
        let deflater = try GzipDeflater(level: level)
        var output = Data()
        try data.withUnsafeBytes { try deflater.compress($0) { output.append(contentsOf: $0) } }
        try deflater.finish { output.append(contentsOf: $0) }
        return output
    }
}
