import FoundationEssentials
import MapGateBase
import MapGateTrust

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
        // Under the lock, no other writer's: what a killed run left goes before anything is written.
        Self.removeTemporaryPackages(in: path)
        Self.removeTemporaryFiles(in: path)
    }

    /// Removes the temporary files of mapgate's own names a killed run left in the mirror's
    /// folder (`.catalog.json.PID.tmp` and the like, ``AtomicFile``; found by an attack: they
    /// stayed in the stick's root). Only those names: the folder is the user's (a stick's root).
    static func removeTemporaryFiles(in path: String) {
        let names = [MirrorLayout.catalogName, MirrorLayout.signatureName, MirrorLayout.manifestName]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            let isOwn = names.contains { own in
                guard name.hasPrefix("." + own + ".") else { return false }
                let pid = name.dropFirst(own.count + 2).dropLast(4)
                return !pid.isEmpty && pid.allSatisfy { ("0"..."9").contains($0) }
            }
            if isOwn { unlink(path + "/" + name) }
        }
    }

    public func holds(sha256: String, size: Int64) -> Bool {
        // A regular file of its own, as `sync --from` reads it (found by an attack: a symbolic
        // link to the right bytes counted as "already in the mirror", and every reader refused it).
        let target = path + "/" + MirrorLayout.packageName(sha256: sha256)
        var info = stat()
        guard lstat(target, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) == size else { return false }
        return (try? SHA256Hasher.hex(ofFileAt: target)) == sha256
    }

    /// The file `name`, nil when it is missing, not a regular file, or larger than any mirror
    /// file of that name may be (what `sync --from` reads at most: found by an attack, a 1 GB
    /// `mirror.json` on a stick took 2 GB of memory, and a 3 GB one crashed the run).
    public func read(name: String) -> Data? {
        guard let file = try? RegularFile(forReadingAtPath: path + "/" + name) else { return nil }
        let limit = name == MirrorLayout.manifestName ? MirrorManifest.maximumBytes : CatalogSource.maximumBytes
        guard file.size <= Int64(limit) else { return nil }
        return try? file.readAll()
    }

    /// Removes the temporary packages left in the mirror at `path` (found by an attack: a 67 MB
    /// one a Ctrl-C left stayed, and a stick with room for the mirror then had none): those of
    /// process `pid` (a run stopped by a signal removes its own), or all of them (under the
    /// folder's lock, where no other writer is at work).
    public static func removeTemporaryPackages(in path: String, of pid: Int32? = nil) {
        let packages = path + "/" + MirrorLayout.packagesFolder
        let suffix = pid.map { ".\($0).partial" } ?? ".partial"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: packages)) ?? [] where name.hasPrefix(".") && name.hasSuffix(suffix) {
            unlink(packages + "/" + name)
        }
    }

    public func temporaryPackage(_ sha256: String) -> String {
        path + "/" + MirrorLayout.packagesFolder + "/." + sha256 + ".\(getpid()).partial"
    }

    public func commit(_ temporary: String, sha256: String) -> String? {
        let target = path + "/" + MirrorLayout.packageName(sha256: sha256)
        if let reason = DurableFile.flush(temporary) { return L.localized("cannot write %1$s: %2$s", temporary, reason) }
        // Read back from the disk before it is named (found by an attack: a file system that
        // said a write was done when it was not left a package 2 MB short, and `mirror` said done).
        if let reason = Self.readBack(temporary, sha256: sha256) { return L.localized("cannot write %1$s: %2$s", temporary, reason) }
        if let reason = DurableFile.rename(temporary, over: target, folder: PathText.deletingLastComponent(target)) {
            return L.localized("cannot write %1$s: %2$s", target, reason)
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
        Self.dropCached(path + "/" + name)
        guard read(name: name) == data else {
            throw GeneralFailure(
                L.localized("cannot write %1$s: %2$s", path + "/" + name, L.localized("what was read back is not what was written")), kind: .io)
        }
    }

    /// Why the flushed file at `path` is not what `sha256` names, read back from the disk (its
    /// cached pages dropped first); nil when it is.
    static func readBack(_ path: String, sha256: String) -> String? {
        dropCached(path)
        guard let read = try? SHA256Hasher.hex(ofFileAt: path) else { return L.localized("it cannot be read back") }
        return read == sha256 ? nil : L.localized("what was read back is not what was written")
    }

    /// Asks the kernel to drop the file's cached pages (written and flushed), so that the next
    /// read comes from the disk. Best effort.
    private static func dropCached(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return }
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        close(descriptor)
    }

    public func remove(name: String) {
        try? FileManager.default.removeItem(atPath: path + "/" + name)
    }

    public func removePackages(keeping: Set<String>) {
        let folder = path + "/" + MirrorLayout.packagesFolder
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !keeping.contains(name) {
            // A file, never a folder of that name with what it holds (found by an attack).
            if name.isSHA256Hex || (name.hasPrefix(".") && name.hasSuffix(".partial")) { unlink(folder + "/" + name) }
        }
    }

    public func finish() {
        lock = nil
    }
}
