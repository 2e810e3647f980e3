import FoundationEssentials

/// The seal of a pending install's record (`regions/.ID.pending.json`, written by `sync` before
/// the rename that installs a region): a keyed hash with the gate record's key, so that a record
/// written or edited by hand is not taken for one a run wrote (found by an attack: a pending record
/// written by hand, beside a file fetched by hand, was taken in as an installed version, and with
/// the use of a killed run, put in place, without a use). As tamper-evident as the gate's record
/// (the threat model in docs/gate.md).
public enum PendingInstallSeal {
    /// The seal of the record stored as `text`; throws when libcrypto cannot compute it.
    public static func seal(_ text: String) throws -> String {
        try GateRecordSeal.sealPendingInstall(text)
    }
}
