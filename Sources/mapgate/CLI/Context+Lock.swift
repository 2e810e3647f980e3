import FoundationEssentials
import MapGate

extension Context {
    /// Takes the one-writer lock of the data directory, telling the user when it must wait.
    func lockDataDirectory() throws -> DirectoryLock {
        try DirectoryLock(directory: dataDirectory) {
            console.note("waiting for another mapgate to finish with \(dataDirectory.path)…")
        }
    }
}
