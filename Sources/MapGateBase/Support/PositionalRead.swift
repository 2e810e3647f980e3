import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// `pread(2)` until every byte asked for is read, retried on EINTR: the bytes, or why not (the
/// caller words the error, naming its file).
public enum PositionalRead {
    public enum Failure: Error, Sendable {
        /// The system's error number.
        case system(Int32)
        /// The file ended first.
        case endOfFile

        /// The reason, in the user's language (``SystemErrorReason``).
        public var reason: String {
            switch self {
            case .system(let code): SystemErrorReason.text(code)
            case .endOfFile: Localization.localized("end of file")
            }
        }
    }

    /// `length` bytes of `descriptor` from `offset`.
    public static func read(_ descriptor: Int32, offset: UInt64, length: Int) -> Result<Data, Failure> {
        var data = Data(count: length)
        var failure: Failure?
        data.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < length {
                let count = pread(descriptor, buffer.baseAddress! + done, length - done, off_t(offset) + off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    failure = count < 0 ? .system(errno) : .endOfFile
                    return
                }
                done += count
            }
        }
        return failure.map { .failure($0) } ?? .success(data)
    }
}
