import FoundationEssentials
import Glibc
import MapGateBase

/// The files of Leaflet that the viewer page loads, and no others: `leaflet.js`, `leaflet.css`
/// and the PNGs of its `images/` folder, each a regular file inside the Leaflet folder (no
/// symlink leading out of it). `leafletPath` is the user's to set, so it must not become a way
/// to read other files (a region, or anything on the machine) from the server.
public enum LeafletFiles {
    /// The bytes of `name` (as in `/_leaflet/NAME`) from `folder`, or nil when it is not one of
    /// Leaflet's files.
    public static func contents(of name: String, in folder: String) -> Data? {
        guard isLeafletName(name) else { return nil }
        return readRegularFile(name, in: folder)
    }

    /// The bytes of `folder/name` when it and its parent inside `folder` are real (no symlink)
    /// and at most 4 MiB; nil otherwise.
    static func readRegularFile(_ name: String, in folder: String) -> Data? {
        // Follow no symlink: the file itself, and the `images` folder for images, must be real.
        // Opened without blocking and checked on the descriptor: a FIFO there cannot hold a thread.
        var info = stat()
        if name.hasPrefix("images/") {
            guard lstat(folder + "/images", &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        }
        guard let file = try? RegularFile(forReadingAtPath: folder + "/" + name, followingLinks: false), file.size <= 4 << 20 else { return nil }
        return try? file.readAll()
    }

    /// `leaflet.js`, `leaflet.css`, or `images/<letters, digits, - _>.png`.
    static func isLeafletName(_ name: String) -> Bool {
        if name == "leaflet.js" || name == "leaflet.css" { return true }
        guard name.hasPrefix("images/"), name.hasSuffix(".png") else { return false }
        let stem = name.dropFirst("images/".count).dropLast(".png".count)
        return !stem.isEmpty && stem.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
