import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

/// The `regions` table of the state database.
public struct RegionRegistry {
    let database: SQLiteDatabase

    public init(state: StateDatabase) {
        database = state.database
    }

    public func all() throws -> [InstalledRegion] {
        try records(where: nil)
    }

    /// The record of `id`, or nil; only that row is read, so another row's damage does not stop it.
    public func region(_ id: String) throws -> InstalledRegion? {
        try records(where: id).first
    }

    /// Whether the table has a row of `id`, whatever it holds.
    func hasRow(_ id: String) throws -> Bool {
        try !database.query("SELECT 1 FROM regions WHERE id = ?", [.text(id)]) { _ in true }.isEmpty
    }

    /// A row that was not written by mapgate (no id, name or version, an unknown format) is an
    /// error naming it, never read as an empty name or a PNG region.
    private func records(where id: String?) throws -> [InstalledRegion] {
        try database.query(
            """
            SELECT id, name, version, format, sha256, size, installed_at, minzoom, maxzoom, bounds, source_url, content_hash, tile_count,
                file_modified, file_inode, package_wal, delta_sha256, metadata_sha256
            FROM regions \(id == nil ? "" : "WHERE id = ? ")ORDER BY id
            """, id.map { [.text($0)] } ?? []
        ) { row in
            func damaged(_ reason: String) -> RegionError {
                RegionError(
                    region: row.text(0) ?? "?",
                    reason: L.localized("its row in %1$s was changed outside mapgate (%2$s); 'mapgate remove' it, then sync it again", "\(database.path)", "\(reason)"),
                    kind: .badData)
            }
            guard let id = row.text(0), !id.isEmpty else { throw damaged("no id") }
            // An id names the region's files: one that is not a region id is never used as a path
            // (found by an attack: `../../../victim` in the row, and `remove` deleted a file outside
            // the data directory).
            guard Catalog.isValidRegionID(id) else { throw damaged("id \"\(TerminalText.inline(id))\" is not a region id") }
            guard let name = row.text(1), let version = row.text(2), !version.isEmpty else { throw damaged("no name or version") }
            guard let format = TileFormat(rawValue: row.text(3) ?? "") else {
                throw damaged("format \"\(row.text(3) ?? "")\" is not one of \(TileFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return InstalledRegion(
                id: id, name: name, version: version,
                format: format, sha256: row.text(4).flatMap { $0.isEmpty ? nil : $0 }, size: row.int64(5),
                installedAt: row.date(6) ?? Date(timeIntervalSince1970: 0),
                minzoom: row.isNull(7) ? nil : row.int(7), maxzoom: row.isNull(8) ? nil : row.int(8),
                bounds: row.text(9).map { $0.split(separator: ",").compactMap { Double($0) } },
                sourceURL: row.text(10), contentHash: row.text(11), tileCount: row.isNull(12) ? nil : row.int(12),
                fileStamp: row.isNull(13) || row.isNull(14)
                    ? nil : RegionFileStamp(size: row.int64(5), modified: row.int64(13), inode: UInt64(bitPattern: row.int64(14))),
                packageWasWAL: row.isNull(15) ? nil : row.int(15) != 0,
                deltaSHA256: row.text(16), metadataSHA256: row.text(17))
        }
    }

    /// Records an installed region (in the caller's transaction, if any).
    func save(_ region: InstalledRegion) throws {
        try database.execute(
            """
            INSERT OR REPLACE INTO regions (id, name, version, format, sha256, size, installed_at, minzoom, maxzoom, bounds, source_url,
                content_hash, tile_count, file_modified, file_inode, package_wal, delta_sha256, metadata_sha256)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(region.id), .text(region.name), .text(region.version), .text(region.format.rawValue), .text(region.sha256 ?? ""),
                .integer(region.size), .dateOrNull(region.installedAt), region.minzoom.map { .integer(Int64($0)) } ?? .null,
                region.maxzoom.map { .integer(Int64($0)) } ?? .null,
                .textOrNull(region.bounds?.map { String($0) }.joined(separator: ",")), .textOrNull(region.sourceURL),
                .textOrNull(region.contentHash), region.tileCount.map { .integer(Int64($0)) } ?? .null,
                region.fileStamp.map { .integer($0.modified) } ?? .null, region.fileStamp.map { .integer(Int64(bitPattern: $0.inode)) } ?? .null,
                region.packageWasWAL.map { .integer($0 ? 1 : 0) } ?? .null, .textOrNull(region.deltaSHA256),
                .textOrNull(region.metadataSHA256),
            ])
    }

    func delete(_ id: String) throws {
        try database.execute("DELETE FROM regions WHERE id = ?", [.text(id)])
    }
}
