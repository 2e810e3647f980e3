import FoundationEssentials
import MapGate

private typealias L = Localization

extension Context {
    /// Takes the one-writer lock of the data directory, telling the user when it must wait.
    func lockDataDirectory() throws -> DirectoryLock {
        try DirectoryLock(directory: dataDirectory) { noteWaitingForWriter() }
    }

    /// Tells the user that another mapgate is changing the data directory and this one waits.
    func noteWaitingForWriter() {
        console.note(L.localized("waiting for another mapgate to finish with %1$s…", "\(dataDirectory.path)"))
    }
}
