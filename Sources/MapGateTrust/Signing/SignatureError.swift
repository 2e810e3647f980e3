import FoundationEssentials
import MapGateBase

/// Why a minisign signature, public key or secret key was refused, or why signing failed.
///
/// Each case names the failing check, so a caller can tell a damaged file from a catalog that
/// changed after signing. Descriptions name no file: the caller knows which one it read and
/// prefixes it (`catalog.json.minisig: …`).
public enum SignatureError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// The signature file has no bytes at all.
    case signatureFileEmpty
    /// The signature file is larger than ``MinisignSignature/maximumFileSize``; it is not read.
    case signatureFileTooLarge(byteCount: Int, limit: Int)
    /// The signature file ends before `missingLine` (1 to 4).
    case signatureFileTruncated(missingLine: Int)
    /// A line of the signature file (1 to 4) is not what minisign writes there.
    case signatureLineMalformed(line: Int, problem: String)
    /// The signature names an algorithm other than `Ed` (legacy) or `ED` (prehashed).
    case unknownAlgorithm(String)
    /// The signature was made by a key that is not among the trusted ones.
    case unknownKeyID(MinisignKeyID, trusted: [MinisignKeyID])
    /// A legacy (`Ed`, not prehashed) signature, and the verifier requires prehashed ones.
    case legacySignatureRefused(keyID: MinisignKeyID)
    /// The signature does not match the message bytes: the signed file changed after signing.
    case messageMismatch(keyID: MinisignKeyID)
    /// The message signature is good, but the signature over it and the trusted comment is not:
    /// the trusted comment (or that second signature) was altered.
    case trustedCommentMismatch(keyID: MinisignKeyID)
    /// A public key that is not a minisign Ed25519 public key.
    case publicKeyMalformed(String)
    /// A secret key file that is not a minisign secret key this code can use.
    case secretKeyMalformed(String)
    /// The secret key is encrypted with a password and none was given. (Its key id is encrypted
    /// too, so it cannot be named here.)
    case passwordRequired
    /// The password does not decrypt the secret key.
    case wrongPassword
    /// A comment given for signing cannot be written into a signature file.
    case commentInvalid(String)
    /// libcrypto failed at something that should not fail (out of memory, a missing algorithm).
    case libcrypto(operation: String, detail: String)

    public var kind: FailureKind {
        switch self {
        case .passwordRequired, .wrongPassword, .commentInvalid: .usage
        case .libcrypto: .failure
        default: .badData
        }
    }

    public var errorDescription: String? {
        switch self {
        case .signatureFileEmpty:
            L.localized("signature file is empty")
        case .signatureFileTooLarge(let byteCount, let limit):
            L.localized("signature file is %1$s bytes, more than the %2$s a minisign signature can take", "\(byteCount)", "\(limit)")
        case .signatureFileTruncated(let line):
            L.localized("signature file is truncated: it ends before line %1$s (%2$s)", "\(line)", Self.lineName(line))
        case .signatureLineMalformed(let line, let problem):
            L.localized("signature file line %1$s (%2$s) is malformed: %3$s", "\(line)", Self.lineName(line), problem)
        case .unknownAlgorithm(let algorithm):
            L.localized("signature uses the unknown algorithm %1$s (minisign writes \"ED\", or \"Ed\" for legacy signatures)", algorithm)
        case .unknownKeyID(let keyID, let trusted):
            if trusted.isEmpty {
                L.localized("signature was made by key %1$s, and no key is trusted", keyID.hex)
            } else {
                L.localized("signature was made by key %1$s, which is not trusted (trusted keys: %2$s)", keyID.hex, trusted.map(\.hex).joined(separator: ", "))
            }
        case .legacySignatureRefused(let keyID):
            L.localized("signature by key %1$s is a legacy one (algorithm \"Ed\", not prehashed), and only prehashed signatures are accepted", keyID.hex)
        case .messageMismatch(let keyID):
            L.localized("the file changed after signing: the signature by key %1$s does not match its contents", keyID.hex)
        case .trustedCommentMismatch(let keyID):
            L.localized("the trusted comment was altered: its signature by key %1$s is invalid", keyID.hex)
        case .publicKeyMalformed(let problem):
            L.localized("not a minisign public key: %1$s", problem)
        case .secretKeyMalformed(let problem):
            L.localized("not a usable minisign secret key: %1$s", problem)
        case .passwordRequired:
            L.localized("the secret key is protected by a password, and none was given")
        case .wrongPassword:
            L.localized("wrong password for the secret key")
        case .commentInvalid(let problem):
            L.localized("cannot sign with that comment: %1$s", problem)
        case .libcrypto(let operation, let detail):
            L.localized("libcrypto failed at %1$s: %2$s", operation, detail)
        }
    }

    /// What minisign writes on each line of a `.minisig` file.
    static func lineName(_ line: Int) -> String {
        switch line {
        case 1: L.localized("the untrusted comment")
        case 2: L.localized("the signature")
        case 3: L.localized("the trusted comment")
        case 4: L.localized("the signature of the trusted comment")
        default: L.localized("past the end of a signature")
        }
    }
}
