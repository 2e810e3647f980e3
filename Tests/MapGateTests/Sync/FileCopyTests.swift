import Foundation
import Testing
import TestSupport

import MapGate
@testable import MapGateWorkflows

/// `FileCopy` copies inside the kernel and never over something that is there.
@Suite struct FileCopyTests {
    @Test func copiesEveryByteOfALargeFile() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.bin")
        // Over the 1 MiB buffer of the fallback and not a multiple of a page.
        var bytes = Data(count: (3 << 20) + 4099)
        for index in stride(from: 0, to: bytes.count, by: 997) { bytes[index] = UInt8(truncatingIfNeeded: index / 997) }
        try bytes.write(to: URL(fileURLWithPath: source))
        let destination = directory.file("copy.bin")

        try FileCopy.copy(from: source, to: destination)

        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == bytes)
        let mode = try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o644)
    }

    @Test func neverWritesOverAnExistingFileAndNamesWhatFailed() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.bin")
        try Data("new".utf8).write(to: URL(fileURLWithPath: source))
        let existing = directory.file("existing.bin")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: existing))

        let exists = #expect(throws: GeneralFailure.self) { try FileCopy.copy(from: source, to: existing) }
        #expect(exists?.localizedDescription.contains(existing) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == Data("keep".utf8))

        let missing = directory.file("missing.bin")
        let absent = #expect(throws: GeneralFailure.self) { try FileCopy.copy(from: missing, to: directory.file("out.bin")) }
        #expect(absent?.localizedDescription.contains(missing) == true)
        #expect(!FileManager.default.fileExists(atPath: directory.file("out.bin")))
    }

    /// Across file systems (tmpfs to the temporary folder's) the kernel refuses to copy (EXDEV on
    /// Linux 5.19 and later): the bytes go through a buffer instead, and all of them arrive.
    @Test func copiesAcrossFileSystems() throws {
        let directory = try TemporaryDirectory()
        let shared = "/dev/shm/mapgate-filecopy-\(UUID().uuidString)"
        var bytes = Data(count: (1 << 20) * 2 + 3)
        for index in stride(from: 0, to: bytes.count, by: 4_093) { bytes[index] = UInt8(truncatingIfNeeded: index) }
        try bytes.write(to: URL(fileURLWithPath: shared))
        defer { try? FileManager.default.removeItem(atPath: shared) }
        let destination = directory.file("copy.bin")

        try FileCopy.copy(from: shared, to: destination)

        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == bytes)
    }

    /// Only a regular file is copied: a FIFO (which would wait for a writer, then never end) and
    /// a character device such as /dev/zero (which never ends) are refused before any byte is
    /// read, and so is a symbolic link, even to a regular file (a link planted in a data folder
    /// would make a sync run as root copy, say, /etc/shadow into a file others can read).
    @Test func refusesWhatIsNotARegularFile() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let secret = directory.file("secret")
        try Data("secret".utf8).write(to: URL(fileURLWithPath: secret))
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secret)
        for (source, reason) in [(fifo, "is not a regular file"), ("/dev/zero", "is not a regular file"), (link, "symbolic links")] {
            let destination = directory.file("copy-of-\((source as NSString).lastPathComponent)")
            let error = #expect(throws: GeneralFailure.self) { try FileCopy.copy(from: source, to: destination) }
            #expect(error?.localizedDescription.contains(reason) == true, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: destination))
        }
    }
}
