import FoundationEssentials
import Glibc

/// The text of any error: a ``LocalizedError``'s `errorDescription` (every error of the library
/// has one); for a file error of Foundation's (a `CocoaError` from `FileManager` or `Data`, a
/// `POSIXError`) mapgate's own words for the system's reason (``SystemErrorReason``: "permission
/// denied", "the disk is full", in the user's language), else Foundation's reason for the code;
/// for any other error "(Module.Type error 1)".
public func errorMessage(_ error: any Error) -> String {
    if let code = SystemErrorReason.code(of: error) { return SystemErrorReason.text(code) }
    let isCocoa = error is CocoaError || error._domain == "NSCocoaErrorDomain"
    if !isCocoa, let localized = error as? any LocalizedError, let description = localized.errorDescription {
        return description
    }
    let code = (error as? CocoaError)?.code.rawValue ?? error._code
    if isCocoa {
        return cocoaReasons[code] ?? "(NSCocoaErrorDomain error \(code).)"
    }
    return "(\(error._domain) error \(code).)"
}

/// Foundation's reasons for the `CocoaError` codes mapgate can meet.
private let cocoaReasons: [Int: String] = [
    4: "The file doesn’t exist.",
    255: "The file couldn’t be locked.",
    257: "You don’t have permission.",
    258: "The file name is invalid.",
    259: "The file isn’t in the correct format.",
    260: "The file doesn’t exist.",
    261: "The specified text encoding isn’t applicable.",
    262: "The specified URL type isn’t supported.",
    263: "The item is too large.",
    264: "The text encoding of the contents couldn’t be determined.",
    513: "You don’t have permission.",
    514: "The file name is invalid.",
    516: "A file with the same name already exists.",
    517: "The specified text encoding isn’t applicable.",
    518: "The specified URL type isn’t supported.",
    640: "There isn’t enough space.",
    642: "The volume is read only.",
    3840: "The data is not in the correct format.",
    4864: "The data isn’t in the correct format.",
    4865: "The data is missing.",
    4866: "The data isn’t in the correct format.",
]
