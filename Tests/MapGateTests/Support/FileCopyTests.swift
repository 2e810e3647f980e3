import Foundation
import Testing
import TestSupport

@testable import MapGate

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

    /// A source the kernel cannot copy from (a procfs file reports no size): the bytes go
    /// through a buffer instead, and all of them arrive.
    @Test func fallsBackWhereTheKernelCannotCopy() throws {
        let directory = try TemporaryDirectory()
        let destination = directory.file("mounts.txt")

        try FileCopy.copy(from: "/proc/self/mounts", to: destination)

        let copied = try String(contentsOfFile: destination, encoding: .utf8)
        #expect(copied.contains(" / "), "\(copied.prefix(200))")
    }
}
