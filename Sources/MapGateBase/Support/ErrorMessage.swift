import FoundationEssentials
import Glibc

/// The text of any error, as Foundation's `localizedDescription` gave it (mapgate no longer links
/// Foundation, which brings ICU): a ``LocalizedError``'s `errorDescription` (every error of the
/// library has one); for Foundation's own errors (a `CocoaError` from `FileManager` or `Data`,
/// a coder's error, a `POSIXError`) "The operation could not be completed. " and the reason
/// Foundation gives for the code ("The file doesn’t exist.", "You don’t have permission.", the
/// `strerror` text); for any other error "The operation could not be completed. (Module.Type
/// error 1.)".
public func errorMessage(_ error: any Error) -> String {
    let prefix = "The operation could not be completed. "
    if let posix = error as? POSIXError {
        return prefix + String(cString: strerror(posix.code.rawValue))
    }
    let isCocoa = error is CocoaError || error._domain == "NSCocoaErrorDomain"
    if !isCocoa, let localized = error as? any LocalizedError, let description = localized.errorDescription {
        return description
    }
    let code = (error as? CocoaError)?.code.rawValue ?? error._code
    if isCocoa {
        return prefix + (cocoaReasons[code] ?? "(NSCocoaErrorDomain error \(code).)")
    }
    return prefix + "(\(error._domain) error \(code).)"
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
