import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// What system mode's `sync --from DIR` (run by the service) asks of the caller's process, which
/// opened the folder (``PassedFolderHost``): one framed JSON message at a time, an opened file
/// travelling back as a descriptor with the answer.
enum PassedFolderRequest: Codable, Equatable {
    /// The folder's path as the caller named it (absolute), for messages and records.
    case path
    /// `lstat` of a file of the mirror, by its name in it (``MirrorLayout/isMirrorFile(_:)``).
    case status(name: String)
    /// The file, opened for reading.
    case open(name: String)
}

/// The answer to a ``PassedFolderRequest``.
enum PassedFolderAnswer: Codable, Equatable {
    case path(String)
    case status(LocalFileStatus)
    /// With the file's descriptor.
    case opened
    /// The system's `errno`.
    case failed(code: Int32)
}
