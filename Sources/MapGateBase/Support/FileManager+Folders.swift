import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension FileManager {
    /// Why `path` could not be made a folder, given the error `createDirectory` threw: the part of
    /// the path that stands in the way when one does ("/data/regions is a regular file, not a
    /// folder", where the system says only "it already exists"), else the error's own reason.
    package func folderCreationReason(atPath path: String, error: any Error) -> String {
        obstacleToFolder(atPath: path) ?? errorMessage(error)
    }

    /// What keeps `path` from being a folder: its nearest part that exists when that is not a
    /// folder ("/etc/passwd is a regular file, not a folder"); nil when that part is a folder.
    package func obstacleToFolder(atPath path: String) -> String? {
        var current = path
        while !current.isEmpty, current != "/" {
            var info = stat()
            if stat(current, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    return L.localized("%1$s is %2$s, not a folder", current, RegularFile.kindName(info.st_mode))
                }
                return nil
            }
            current = PathText.deletingLastComponent(current)
        }
        return nil
    }
}
