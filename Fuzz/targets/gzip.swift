import Foundation
@testable import MapGateBase

// GzipInflater over any bytes (packages and vector tiles come from publishers): the first byte
// picks the size of the pieces the rest is fed in, the second a limit for `decompress`. Never
// traps; fails only with GzipError; fed in pieces, it gives what it gives in one piece, handed
// out in whole buffers; skipping the trailer check never loses output; and `decompress` stops at
// its limit, never handing back more.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    guard data.count >= 2 else { return 0 }
    let chunk = 1 + Int(data[data.startIndex]) * 13
    let limit = Int(data[data.startIndex + 1]) << 12
    let body = Data(data.dropFirst(2))

    let whole = outcome { try GzipInflater.decompress(body) }
    let pieces = outcome { try inflateInPieces(body, chunk: chunk, verifiesTrailer: true) }
    require(whole == pieces, "in pieces of \(chunk) bytes: \(pieces), in one: \(whole)")
    if case .unpacked(let output) = whole {
        let unchecked = outcome { try inflateInPieces(body, chunk: chunk, verifiesTrailer: false) }
        require(unchecked == whole, "without the trailer check: \(unchecked), with it: \(whole)")
        let limited = outcome { try GzipInflater.decompress(body, maximumSize: limit) }
        if output.count <= limit {
            require(limited == whole, "within the limit \(limit): \(limited), without: \(whole)")
        } else {
            require(limited == .failed("the gzip data unpacks to more than \(limit) bytes"), "over the limit \(limit): \(limited)")
        }
    }
    return 0
}

private enum Outcome: Equatable, CustomStringConvertible {
    case unpacked(Data)
    case failed(String)

    var description: String {
        switch self {
        case .unpacked(let data): "\(data.count) bytes"
        case .failed(let reason): "error \"\(reason)\""
        }
    }
}

/// Errors other than GzipError abort; GzipError's message is compared only for the limit, as
/// zlib may name a corruption differently depending on where the input was cut.
private func outcome(_ body: () throws -> Data) -> Outcome {
    do {
        return .unpacked(try body())
    } catch let error as GzipError {
        return .failed(error.message.hasPrefix("the gzip data unpacks") ? error.message : "corrupt")
    } catch {
        unexpected(error)
    }
}

private func inflateInPieces(_ data: Data, chunk: Int, verifiesTrailer: Bool) throws -> Data {
    let inflater = try GzipInflater(verifiesTrailer: verifiesTrailer)
    var output = Data()
    var finishing = false
    let sink = { (bytes: UnsafeRawBufferPointer) in
        // Whole buffers while inflating; finish hands out the rest, shorter than a buffer.
        require(
            finishing ? (1..<GzipInflater.bufferSize).contains(bytes.count) : bytes.count == GzipInflater.bufferSize,
            "a piece of \(bytes.count) bytes \(finishing ? "at the finish" : "while inflating")")
        output.append(contentsOf: bytes)
    }
    var offset = data.startIndex
    while offset < data.endIndex {
        let end = min(data.endIndex, offset + chunk)
        try data[offset..<end].withUnsafeBytes { try inflater.inflate($0, sink: sink) }
        offset = end
    }
    finishing = true
    try inflater.finish(sink: sink)
    return output
}
