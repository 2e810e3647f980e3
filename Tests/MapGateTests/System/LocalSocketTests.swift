import Foundation
import MapGate
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// System mode's messages carry descriptors; a peer may not make the receiver hold more than
/// the message it expects can carry.
@Suite struct LocalSocketTests {
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    @Test func aMessageWithMoreDescriptorsThanExpectedIsRefusedAndNoneIsKept() throws {
        let (sender, receiver) = try LocalSocket.pair(name: "test")
        let streams = (0..<6).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { streams.forEach { close($0) } }
        // Four are what system mode's request carries at most: taken.
        try sender.send(Data("{}".utf8), descriptors: Array(streams.prefix(4)))
        let taken = try receiver.receive(limit: 1024, maximumDescriptors: 4, timeout: 5)
        #expect(taken.descriptors.count == 4)
        taken.descriptors.forEach { close($0) }
        let before = Self.openDescriptors()
        try sender.send(Data("{}".utf8), descriptors: streams)
        let error = #expect(throws: LocalSocketError.self) { try receiver.receive(limit: 1024, maximumDescriptors: 4, timeout: 5) }
        #expect(error?.code == ETOOMANYREFS)
        #expect(Self.openDescriptors() == before, "descriptors of a refused message were kept")
    }
}
