import Foundation

/// Runs a program with some of the libraries mapgate opens with dlopen replaced by other files,
/// the way a broken installation would have them: mapgate opens them from the system's library
/// folder by absolute path (so `LD_LIBRARY_PATH` cannot), and a private mount namespace
/// (`unshare -m`, root only) bind-mounts each stand-in over the real file for that run alone.
public enum LibraryStandIns {
    /// The system library folder the shims open from (`Sources/CLinux/system_libraries.h`).
    public static let folder = "/usr/lib/x86_64-linux-gnu/"

    /// Mounts each `(file, target)` pair given before `--`, then runs what follows it.
    static let script = #"while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 97; shift 2; done; shift; exec "$@""#

    /// `command` (a program and its arguments), run with `standIns` (soname → file) in place.
    public static func wrap(_ command: (String, [String]), _ standIns: [String: String]) -> (String, [String]) {
        guard !standIns.isEmpty else { return command }
        let mounts = standIns.sorted { $0.key < $1.key }.flatMap { [$0.value, folder + $0.key] }
        return ("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/sh", "-c", script, "sh"] + mounts + ["--", command.0] + command.1)
    }

    /// A real shared library with none of the functions mapgate looks for (zlib), copied into `folder`
    /// under each of `sonames`: what the tests stand in for a library that cannot be used.
    public static func stubs(_ sonames: [String], in folder: String) throws -> [String: String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let zlib = URL(fileURLWithPath: Self.folder + "libz.so.1").resolvingSymlinksInPath().path
        var files: [String: String] = [:]
        for soname in sonames {
            let stub = folder + "/" + soname
            if !FileManager.default.fileExists(atPath: stub) { try FileManager.default.copyItem(atPath: zlib, toPath: stub) }
            files[soname] = stub
        }
        return files
    }
}
