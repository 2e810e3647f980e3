import Foundation
import MapGateBase
@testable import MapGateTrust

// MinisignSignature(data:) over arbitrary bytes: only SignatureError may come out; an accepted
// signature renders to text that parses back to it; verifying it (against the demo key, over the
// bytes after its fourth line, which parsing ignores) never traps. A seed holding the demo
// catalog's real signature followed by the catalog reaches a successful verification.

private let demoKey = try! MinisignPublicKey(text: "RWR3FrpUU/yaSpsVqdL/nIPgTaAyEjBZc0vtcivX4Y+pDFGQgMG3PX1y")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignature(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = input(start, count)
    let signature: MinisignSignature
    do {
        signature = try MinisignSignature(data: data)
    } catch let error as SignatureError {
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return 0
    } catch {
        unexpected(error)
    }
    // A lossily decoded untrusted comment can grow past minisign's line limit; only then may the
    // rendered text fail to parse.
    let firstLineFits =
        MinisignSignature.untrustedCommentPrefix.utf8.count + signature.untrustedComment.utf8.count
        <= MinisignSignature.maximumUntrustedCommentLineLength
    if firstLineFits {
        do {
            let again = try MinisignSignature(text: signature.text)
            require(again == signature, "the rendered signature parses to another one")
        } catch {
            require(false, "the rendered signature does not parse: \(error)")
        }
    }
    var message = data
    var newlines = 0
    if let end = data.firstIndex(where: { byte in
        if byte == 0x0A { newlines += 1 }
        return newlines == 4
    }) {
        message = data[(end + 1)...]
    }
    do {
        let verification = try demoKey.verify(signature: signature, message: Data(message))
        require(verification.trustedComment == signature.trustedComment, "verified trusted comment differs")
    } catch is SignatureError {
    } catch {
        unexpected(error)
    }
    return 0
}
