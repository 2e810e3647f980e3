import Foundation
import MapGateBase
@testable import MapGateStorage

// PMTilesArchive over a mutated archive (issue 39): the input is written to a temporary file,
// opened, its metadata read as publish converts it, every run of tiles walked with every check,
// and, for archives addressing at most 65,536 tiles, every tile read both ways. Only
// PMTilesError may come out; nothing may trap, loop or allocate without bound.

private let directory: String = {
    let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = base + "/mapgate-fuzz-pmtiles-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { _ = rmdir(directory) }
    return path
}()
private let path = directory + "/region.pmtiles"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPMTiles(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    defer { unlink(path) }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    require(descriptor >= 0, "cannot create \(path)")
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    require(written == data.count, "cannot write \(path)")
    do {
        let archive = try PMTilesArchive(path: path)
        // The header written again reads back the same.
        require((try? PMTilesHeader(bytes: archive.header.bytes, path: path)) == archive.header, "header round trip")
        let metadata = try archive.metadata()
        for (name, value) in metadata { require(value.utf8.count <= MBTilesFile.metadataLimit(for: name), "metadata \(name) over its limit") }
        require(metadata["scheme"] == nil, "scheme kept")
        let runs = try archive.tileEntries()
        var last: UInt64?
        for run in runs {
            require(run.runLength > 0 && run.length > 0, "a leaf or empty entry among the runs")
            if let last { require(run.tileID >= last, "runs out of order") }
            last = run.tileID + UInt64(run.runLength)
            require(run.offset + UInt64(run.length) <= archive.header.tileDataLength, "a run past the tile data")
        }
        let addressed = runs.reduce(UInt64(0)) { $0 + UInt64($1.runLength) }
        guard addressed <= 1 << 16 else { return 0 }
        var seen = 0
        var previous: (Int, Int, Int)?
        try archive.forEachTile { z, x, y, bytes in
            seen += 1
            let key = (z, x, TileCoordinate.flippedRow(y, zoom: z))
            if let previous { require(previous < key, "tiles out of hash order") }
            previous = key
            require((try? archive.tile(z: z, x: x, y: y)) == bytes, "tile \(z)/\(x)/\(y) read two ways differs")
        }
        require(seen == Int(addressed), "\(seen) tiles for \(addressed) addressed")
    } catch let error as PMTilesError {
        require(error.kind == .badData || error.kind == .io, "PMTilesError of kind \(error.kind)")
    } catch {
        unexpected(error)
    }
    return 0
}
