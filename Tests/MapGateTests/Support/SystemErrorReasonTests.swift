import Foundation
import MapGate
import Testing

/// The system's reasons in mapgate's words.
@Suite struct SystemErrorReasonTests {
    /// EFBIG without a file size limit is the file system's own limit (FAT32's 4 GiB on a stick),
    /// not `ulimit -f` (found by an attack: a mirror onto a FAT32 stick blamed a limit the user
    /// had not set). The test process has no limit (CI's shell sets none).
    @Test func aFileTooLargeWithoutAProcessLimitIsTheFileSystems() throws {
        try #require(FileSizeLimit.bytes == nil, "the tests run without a file size limit")
        let reason = SystemErrorReason.text(EFBIG)
        #expect(reason.contains("larger than the file system allows"), "\(reason)")
        #expect(reason.contains("FAT32"), "\(reason)")
        #expect(!reason.contains("ulimit"), "\(reason)")
    }

    /// A process limit above 4 GiB cannot be told from FAT32's own (found by an attack: a limit of
    /// 8 GiB and a FAT32 stick blamed the limit alone): both are said; under 4 GiB, the limit.
    @Test func aFileTooLargeUnderALimitAbove4GiBNamesBoth() {
        let both = SystemErrorReason.fileTooLarge(limit: 8 << 30)
        #expect(both.contains("ulimit -f") && both.contains("FAT32"), "\(both)")
        let limit = SystemErrorReason.fileTooLarge(limit: 1 << 20)
        #expect(limit.contains("ulimit -f") && !limit.contains("FAT32"), "\(limit)")
        #expect(!SystemErrorReason.fileTooLarge(limit: nil).contains("ulimit"))
    }
}
