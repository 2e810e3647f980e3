import Foundation
import MapGateBase
@testable import MapGateTrust

// MinisignSecretKey(text:password:) over arbitrary text: only SignatureError may come out, and
// an accepted key signs something its public key verifies.
//
// Without a password an encrypted key stops before scrypt. With one, scrypt runs only when the
// key's own parameters are cheap (at most 16 MiB and N·r·p ≤ 2^16): the library accepts up to
// 4 GiB and p = 16, which is seconds per input and more memory than libFuzzer allows.

private let maximumFuzzMemory: UInt64 = 16 << 20
private let maximumFuzzWork: UInt64 = 1 << 16

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecretKey(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: input(start, count), as: UTF8.self)
    check(text, password: nil)
    if isCheapToDecrypt(text) { check(text, password: "fuzz") }
    return 0
}

private func check(_ text: String, password: String?) {
    let key: MinisignSecretKey
    do {
        key = try MinisignSecretKey(text: text, password: password)
    } catch let error as SignatureError {
        require(!(error.errorDescription ?? "").isEmpty, "an error without a description")
        return
    } catch {
        unexpected(error)
    }
    require(key.publicKey.keyID == key.keyID, "the public key has another key id")
    require(password != nil || !key.isPasswordProtected, "an encrypted key opened without a password")
    do {
        let message = Data(text.utf8.prefix(64))
        let signature = try MinisignSignature(text: try key.sign(message: message, trustedComment: "fuzz"))
        _ = try key.publicKey.verify(signature: signature, message: message)
    } catch {
        require(false, "an accepted key cannot sign and verify: \(error)")
    }
}

/// Whether `text` is an encrypted (`Sc`) key whose scrypt parameters stay within the fuzz limits.
private func isCheapToDecrypt(_ text: String) -> Bool {
    guard text.utf8.count <= MinisignPublicKey.maximumTextLength, let payload = MinisignLines(text).keyPayload(),
        let decoded = Data(base64Encoded: payload), decoded.count == MinisignSecretKey.encodedLength
    else { return false }
    let bytes = [UInt8](decoded)
    guard bytes[2..<4].elementsEqual(MinisignSecretKey.scryptKDF) else { return false }
    func littleEndian64(_ range: Range<Int>) -> UInt64 { bytes[range].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    let parameters = ScryptParameters(opsLimit: littleEndian64(38..<46), memLimit: littleEndian64(46..<54))
    guard let memory = parameters.memoryNeeded, memory <= maximumFuzzMemory else { return false }
    let work = parameters.cost.multipliedReportingOverflow(by: parameters.blockSize)
    guard !work.overflow else { return false }
    let total = work.partialValue.multipliedReportingOverflow(by: parameters.parallelism)
    return !total.overflow && total.partialValue <= maximumFuzzWork
}
