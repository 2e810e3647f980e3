import Foundation
import MapGateBase
@testable import MapGateStorage
@testable import MapGateTrust
@testable import MapGateWorkflows

// MBTilesFile and RegionInstaller.validate over a mutated SQLite file: the input is written to a
// temporary file, opened, and read the ways sync and the server read a region. Only the
// library's errors may come out; nothing may trap.

/// A folder of this process's own, in memory when /dev/shm exists (a write per input).
private let directory: String = {
    let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = base + "/mapgate-fuzz-mbtiles-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { _ = rmdir(directory) }  // empty by then: each input's files are unlinked after it
    return path
}()
private let path = directory + "/region.mbtiles"

private let region = CatalogRegion(
    id: "fuzz", name: "Fuzz", version: "1", url: "https://maps.example.org/fuzz.mbtiles", size: 1,
    sha256: String(repeating: "0", count: 64), installedSize: 1, format: .png, bounds: nil, minzoom: 0, maxzoom: 30,
    minimumAppVersion: nil)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMBTiles(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let leftovers = ["", "-journal", "-wal", "-shm"].map { path + $0 }
    defer { for file in leftovers { unlink(file) } }
    // Plain write(2): FileManager writes atomically with an fsync, which costs more than the test.
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    require(descriptor >= 0, "cannot create \(path)")
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    require(written == data.count, "cannot write \(path)")
    readEverything()
    do {
        let details = try RegionInstaller.validate(path, against: region)
        require(details.zoom.lowerBound >= region.minzoom && details.zoom.upperBound <= region.maxzoom, "zoom \(details.zoom)")
        require(details.format == region.format, "format \(details.format)")
    } catch let error as RegionError {
        require(error.kind == .badData, "validate failed with \(error.kind): \(error.localizedDescription)")
    } catch {
        unexpected(error)
    }
    return 0
}

private func readEverything() {
    let file: MBTilesFile
    do {
        file = try MBTilesFile(path: path)
    } catch is MBTilesError {
        return
    } catch {
        unexpected(error)
    }
    func attempt<T>(_ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch is MBTilesError {
            return nil
        } catch {
            unexpected(error)
        }
    }
    _ = attempt { try file.metadata() }
    _ = attempt { try file.format() }
    _ = attempt { try file.bounds() }
    _ = attempt { try file.tileCount() }
    _ = attempt { try file.tile(z: 0, x: 0, y: 0) }
    if let zoom = attempt({ try file.zoomRange() }) ?? nil, (0...30).contains(zoom.lowerBound) {
        _ = attempt { try file.tile(z: zoom.lowerBound, x: 0, y: (1 << zoom.lowerBound) - 1) }
    }
    _ = attempt { try file.forEachTile { _, _, _, _ in } }
    _ = attempt { try file.checkIntegrity() }
}
