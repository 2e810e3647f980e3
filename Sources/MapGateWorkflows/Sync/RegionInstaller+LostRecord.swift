import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage
import MapGateTrust

/// Installed regions whose record went with a damaged state database.
extension RegionInstaller {
    /// Takes back the installed file of `region` when its record is gone (the data directory's
    /// `state.sqlite`, which lists the installed regions, was found damaged and made afresh; found
    /// by an attack: the region's file stayed in `regions/`, `list` said nothing was installed,
    /// and `sync` fetched it again and charged a use): only a regular file of a region `sync`
    /// installed under the gate's record (`installedUnderGate`), whose tiles are the catalog's
    /// version (its `contentHash`, checked over the whole file, as a download is), is recorded
    /// again; anything else is left to be fetched as any. Returns whether it was.
    func takeBackLostRecord(of region: CatalogRegion, installedUnderGate: Set<String>) -> Bool {
        let path = directory.regionPath(region.id)
        var info = stat()
        guard installedUnderGate.contains(region.id), let expected = region.contentHash, lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            (try? registry.hasRow(region.id)) == false, PendingInstall.entry(region.id, in: directory) == nil,
            let details = try? Self.validate(path, against: region),
            let tiles = try? TilesetHash.compute(ofFileAt: path), tiles.hex.uppercased() == expected.uppercased(), tiles.nullTileProblem == nil,
            let sha256 = try? SHA256Hasher.hex(ofFileAt: path)
        else { return false }
        var record = InstalledRegion(
            id: region.id, name: region.name, version: region.version, format: details.format, sha256: sha256,
            size: FileManager.default.sizeOfItem(atPath: path), installedAt: clock.now, minzoom: details.zoom.lowerBound, maxzoom: details.zoom.upperBound,
            bounds: details.bounds, sourceURL: URLCredentials.removed(from: region.url), contentHash: tiles.hex, tileCount: tiles.tileCount)
        record.fileStamp = RegionFileStamp(path: path)
        return (try? registry.database.transaction { try registry.save(record) }) != nil
    }
}
