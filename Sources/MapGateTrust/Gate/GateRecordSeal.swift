import CCrypto
import FoundationEssentials
import MapGateBase

/// A keyed hash (HMAC-SHA256) over every field of a gate record, stored beside it, so that a row
/// edited with `sqlite3` (`UPDATE gate SET prompts_shown = 0`) is recognised as tampered.
///
/// The key is compiled into mapgate; someone who takes the binary apart can find it (see the
/// threat model in docs/gate.md). It makes the record tamper-evident to everyone else.
enum GateRecordSeal {
    private static let key = Array("mapgate gate record seal, v1: 6b1f0c59-2a7e-4d3b-9f64-3e0a8c71d5b2".utf8)

    /// The stored JSON texts of a record's nested values, sealed as stored.
    struct Texts {
        var release: String?
        var publisherGate: String?
        var catalogSerials: String?
        var reservations: String? = nil
        var strictestRules: String? = nil
    }

    /// The seal's version: a record sealed under another one (or not at all) is not trusted.
    static let version = "v2"

    /// The seal of `record`, whose nested values are stored as `texts`.
    /// Throws when libcrypto cannot compute it (or cannot be opened: ``SharedLibraryError``): the
    /// record is then neither sealed nor trusted.
    static func seal(_ record: GateRecord, _ texts: Texts) throws -> String {
        func date(_ value: Date?) -> String { value.map { String($0.timeIntervalSince1970.bitPattern) } ?? "-" }
        var fields = [
            version, record.pendingVersion ?? "-", date(record.firstSeen), String(record.promptsShown), date(record.latestClock),
            texts.release ?? "-", date(record.lastLookupAt), date(record.lastAttemptAt), record.lastLookupError ?? "-",
            record.isRecovering ? "1" : "0", String(record.generation),
            texts.catalogSerials ?? "-", texts.publisherGate ?? "-",
            record.installedRegions.joined(separator: ","), String(record.usesSinceLookup), date(record.lastUseReading),
        ]
        // The boot clock, where the record has one: a record saved before it existed seals as it
        // did then, and one that has it cannot lose it (the seal covers it) without being tampered with.
        if let bootID = record.bootID, let bootSeconds = record.bootSeconds {
            fields += [bootID, String(bootSeconds.bitPattern)]
        }
        // Likewise the start of a "not newer" wait, once there is one.
        if let since = record.notNewerSince { fields += ["not-newer", date(since)] }
        // And the runs holding a reserved use, while there are any.
        if let reservations = texts.reservations { fields += ["reservations", reservations] }
        // And the strictest rules an unsigned policy set, once one did.
        if let strictest = texts.strictestRules { fields += ["strictest", strictest] }
        if let first = record.firstUseAt { fields += ["first-use", date(first)] }
        if let counting = record.countingFor { fields += ["counting-for", counting] }
        return try hmac(fields)
    }

    /// The seal of the servers' paid days (``GateRecord/servingDays``) stored as `text` beside the
    /// record of generation `generation`: they belong to that record alone, so a mapgate from
    /// before them, which saves the record without them (a new generation), leaves them unsealed
    /// for it, read as none.
    static func sealServingDays(_ text: String, generation: Int64) throws -> String {
        try hmac([version, "serving-days", String(generation), text])
    }

    /// The seal of ``GateRecord/recentDeliveries`` stored as `text` beside the record of
    /// generation `generation` (as ``sealServingDays(_:generation:)``).
    static func sealDeliveries(_ text: String, generation: Int64) throws -> String {
        try hmac([version, "recent-deliveries", String(generation), text])
    }

    /// The seal of a pending install's record stored as `text` (``PendingInstallSeal``).
    static func sealPendingInstall(_ text: String) throws -> String {
        try hmac([version, "pending-install", text])
    }

    /// HMAC-SHA256 of `fields`, each length-prefixed so that no two lists share a text.
    private static func hmac(_ fields: [String]) throws -> String {
        let text = fields.map { "\($0.utf8.count):\($0)" }.joined(separator: "|")
        try SharedLibrary.crypto.load()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let message = Array(text.utf8)
        guard ccrypto_HMAC(ccrypto_EVP_sha256(), key, Int32(key.count), message, message.count, &digest, &length) != nil, length == 32 else {
            throw LibcryptoError.fromQueue("HMAC (SHA-256)")
        }
        return String.hex(digest.prefix(Int(length)))
    }
}
