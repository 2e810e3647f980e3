import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// A mirror's folder written by this process (``MirrorFolder``): each package under a temporary
/// name inside the folder, flushed, renamed to its hash.
public final class LocalMirrorFolder: MirrorFolder {
    public let path: String
    private var lock: MirrorLock?

    public init(path: String) {
        self.path = path
    }

    public func prepare() throws {
        let packages = path + "/" + MirrorLayout.packagesFolder
        do {
            try FileManager.default.createDirectory(atPath: packages, withIntermediateDirectories: true)
        } catch {
            throw GeneralFailure(
                L.localized("cannot make the mirror folder %1$s: %2$s", "\(packages)", "\(FileManager.default.folderCreationReason(atPath: packages, error: error))"),
                kind: .io)
        }
        // mapgate writes packages into this folder and removes the ones no catalog names: through
        // a symbolic link (one planted on a stick handed over) that would be another folder's
        // files, named by hashes too. `sync --from` refuses such links as well.
        var info = stat()
        guard lstat(packages, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw GeneralFailure(
                L.localized("cannot use the mirror folder %1$s: it is a symbolic link, and mapgate writes and removes files in it: remove the link", "\(packages)"),
                kind: .io)
        }
        lock = try MirrorLock(folder: path)
    }

    public func holds(sha256: String, size: Int64) -> Bool {
        let target = path + "/" + MirrorLayout.packageName(sha256: sha256)
        return FileManager.default.sizeOfItem(atPath: target) == size && (try? SHA256Hasher.hex(ofFileAt: target)) == sha256
    }

    public func temporaryPackage(_ sha256: String) -> String {
        path + "/" + MirrorLayout.packagesFolder + "/." + sha256 + ".\(getpid()).partial"
    }

    public func commit(_ temporary: String, sha256: String) -> String? {
        let target = path + "/" + MirrorLayout.packageName(sha256: sha256)
        if let reason = DurableFile.flush(temporary) { return "cannot write \(temporary): \(reason)" }
        if let reason = DurableFile.rename(temporary, over: target, folder: PathText.deletingLastComponent(target)) {
            return "cannot write \(target): \(reason)"
        }
        return nil
    }

    /// Commits the package open at `descriptor` (a file another process made: the system
    /// service's, in system mode): copied in under a temporary name, then as ``commit(_:sha256:)``.
    func commit(copying descriptor: Int32, sha256: String) -> String? {
        let temporary = temporaryPackage(sha256)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        do {
            try FileCopy.copy(descriptor: descriptor, named: "package \(sha256)", to: temporary)
        } catch {
            return errorMessage(error)
        }
        return commit(temporary, sha256: sha256)
    }

    public func write(_ data: Data, name: String) throws {
        try AtomicFile.write(data, to: path + "/" + name)
    }

    public func remove(name: String) {
        try? FileManager.default.removeItem(atPath: path + "/" + name)
    }

    public func removePackages(keeping: Set<String>) {
        let folder = path + "/" + MirrorLayout.packagesFolder
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !keeping.contains(name) {
            if name.isSHA256Hex || (name.hasPrefix(".") && name.hasSuffix(".partial")) {
                try? FileManager.default.removeItem(atPath: folder + "/" + name)
            }
        }
    }

    public func finish() {
        lock = nil
    }
}
