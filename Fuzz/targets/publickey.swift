import Foundation
import MapGateBase
@testable import MapGateTrust

// MinisignPublicKey(text:) over arbitrary text: only SignatureError may come out, and an
// accepted key reads back the same from both of its written forms.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPublicKey(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: input(start, count), as: UTF8.self)
    let key: MinisignPublicKey
    do {
        key = try MinisignPublicKey(text: text)
    } catch let error as SignatureError {
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return 0
    } catch {
        unexpected(error)
    }
    require(key.base64.hasPrefix("RW") && key.base64.utf8.count == 56, "base64 form \(key.base64)")
    for form in [key.base64, key.fileText, key.fileText.replacingOccurrences(of: "\n", with: "\r\n")] {
        do {
            let again = try MinisignPublicKey(text: form)
            require(again == key, "\(form) reads as another key")
        } catch {
            require(false, "\(form) does not read: \(error)")
        }
    }
    return 0
}
