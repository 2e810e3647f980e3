import FoundationEssentials
import Glibc

/// Path string operations as `NSString` did them (`lastPathComponent`,
/// `deletingLastPathComponent`, `deletingPathExtension`, `standardizingPath`), for mapgate's
/// absolute and simple relative paths; plus the directory walk `FileManager.enumerator(atPath:)`
/// made. Foundation (with ICU) is not linked.
public enum PathText {
    /// `NSTemporaryDirectory()`: `$TMPDIR` with a final slash, else `/tmp/`.
    public static func temporaryDirectory() -> String {
        guard let folder = getenv("TMPDIR").map({ String(cString: $0) }) else { return "/tmp/" }
        return folder.hasSuffix("/") ? folder : folder + "/"
    }

    /// The path with no `//` and no trailing slash (`/` stays `/`).
    private static func trimmed(_ path: String) -> Substring {
        var text = Substring(path)
        while let double = text.firstRange(of: "//") { text.replaceSubrange(double, with: "/") }
        while text.count > 1, text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// `"/a/b/"` → `"b"`, `"/"` → `"/"`, `"name"` → `"name"`.
    public static func lastComponent(_ path: String) -> String {
        let text = trimmed(path)
        if text == "/" { return "/" }
        guard let slash = text.lastIndex(of: "/") else { return String(text) }
        return String(text[text.index(after: slash)...])
    }

    /// `"/a/b"` → `"/a"`, `"/a"` → `"/"`, `"name"` → `""`.
    public static func deletingLastComponent(_ path: String) -> String {
        let text = trimmed(path)
        guard let slash = text.lastIndex(of: "/") else { return "" }
        if slash == text.startIndex { return "/" }
        var head = text[..<slash]
        while head.count > 1, head.hasSuffix("/") { head.removeLast() }
        return String(head)
    }

    /// `"a.tar.gz"` → `"a.tar"`, `".hidden"` → `".hidden"`, `"/x/a.b"` → `"/x/a"`, `"a."` → `"a"`.
    public static func deletingExtension(_ path: String) -> String {
        let text = trimmed(path)
        let start = text.lastIndex(of: "/").map { text.index(after: $0) } ?? text.startIndex
        guard text[start...] != "..", let dot = text[start...].lastIndex(of: "."), dot != start else {
            return String(text)
        }
        return String(text[..<dot])
    }

    /// `~` expanded, `//` and `.` removed, `..` taken back a component (lexically), no trailing
    /// slash.
    public static func standardized(_ path: String) -> String {
        var path = path
        if path == "~" || path.hasPrefix("~/") {
            path = FileManager.default.homeDirectoryForCurrentUser.path + path.dropFirst()
        }
        let isAbsolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." {
                    parts.removeLast()
                } else if !isAbsolute {
                    parts.append(part)
                }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return isAbsolute ? "/" + joined : (joined.isEmpty ? path : joined)
    }

    /// The paths under `folder`, relative to it, depth first in directory order, folders before
    /// their contents, symbolic links not followed (`FileManager.enumerator(atPath:)`); stops when
    /// `visit` returns false. Nothing when `folder` cannot be read.
    public static func walk(_ folder: String, _ visit: (String) -> Bool) {
        _ = walk(folder, relative: "", visit)
    }

    private static func walk(_ folder: String, relative: String, _ visit: (String) -> Bool) -> Bool {
        guard let directory = opendir(folder) else { return true }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let path = relative.isEmpty ? name : relative + "/" + name
            guard visit(path) else { return false }
            let full = folder + "/" + name
            var isFolder = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                isFolder = lstat(full, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
            }
            if isFolder, !walk(full, relative: path, visit) { return false }
        }
        return true
    }
}
