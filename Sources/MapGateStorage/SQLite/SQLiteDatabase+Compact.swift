import FoundationEssentials
import MapGateBase

extension SQLiteDatabase {
    /// Writes a compact copy of the database at `path` to `output` (`VACUUM INTO`: every page
    /// full, no free page), which must not exist. The copy holds the same rows, schema and header
    /// values; the original is only read. Bounded in time like a pass over the file, on a
    /// connection where the file's triggers and schema functions are not trusted.
    ///
    /// A delta's changes split the B-tree pages they land in, and a file updated by delta after
    /// delta grows well past the size of the same version written whole (found by an attack:
    /// 1.7× after five deltas of a tippecanoe region).
    public static func compactCopy(of path: String, to output: String) throws {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        try database.distrustSchema()
        let size = FileManager.default.sizeOfItem(atPath: path)
        try database.withTimeLimit(timeLimit(forPassOver: Int(size))) {
            try database.execute("VACUUM main INTO ?", [.text(output)])
        }
    }
}
