import FoundationEssentials
import MapGateBase

/// The folder a mirror is written into (``MirrorWriter``): one of this process's
/// (``LocalMirrorFolder``), or, in system mode, a user's folder that the user's own process writes
/// on the service's word (``RemoteMirrorFolder``): the service cannot create files in a folder of
/// the user's, and must not be able to (issue 36).
///
/// A package is made into a ``temporaryPackage(_:)`` by the writer, checked, then
/// ``commit(_:sha256:)``ed: flushed and renamed into place, atomically.
public protocol MirrorFolder {
    /// The folder, for messages and the summary.
    var path: String { get }
    /// Makes the folder (and its `packages/`) if missing and takes its lock (``MirrorLock``),
    /// held until ``finish()``.
    func prepare() throws
    /// Whether `packages/SHA256` is there, `size` bytes whose SHA-256 is `sha256`.
    func holds(sha256: String, size: Int64) -> Bool
    /// Where the writer makes the package `sha256` before it is committed (a path that does not exist).
    func temporaryPackage(_ sha256: String) -> String
    /// Puts the made package at `packages/SHA256`, flushed; nil, or why it could not.
    func commit(_ temporary: String, sha256: String) -> String?
    /// Writes a file of the mirror's top level (`mirror.json`, the catalog, its signature) atomically.
    func write(_ data: Data, name: String) throws
    /// Removes a file of the mirror's top level, if there.
    func remove(name: String)
    /// Removes the packages (and dead temporary files) not in `keeping`.
    func removePackages(keeping: Set<String>)
    /// Releases the lock.
    func finish()
    /// A file of the mirror's top level as it is now (the catalog a mirror holds already), if
    /// this process can read it: nil when it is not there, not a regular file, or not readable here.
    func read(name: String) -> Data?
}

extension MirrorFolder {
    /// A folder this process cannot read (system mode's: the user's process writes it).
    public func read(name: String) -> Data? { nil }
}
