import FoundationEssentials
import MapGateBase
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// The last catalog `sync` accepted, kept exactly as it was signed (its bytes and its detached
/// `.minisig`) in the data directory, so that `mapgate mirror` can pass it on unchanged: any
/// mapgate that trusts the publisher's key checks it as strictly as the publisher's own.
public struct SavedCatalog: Sendable, Equatable {
    /// The catalog's bytes, exactly as fetched and verified.
    public var bytes: Data
    /// The `.minisig` file that signed them; nil for an unsigned catalog (a private deployment).
    public var signature: Data?

    public init(bytes: Data, signature: Data?) {
        self.bytes = bytes
        self.signature = signature
    }

    public static func path(in directory: DataDirectory) -> String { directory.path + "/catalog.json" }
    public static func signaturePath(in directory: DataDirectory) -> String { path(in: directory) + ".minisig" }

    /// Where a save puts the new pair first (``save(in:lock:)``).
    static func pendingPath(in directory: DataDirectory) -> String { path(in: directory) + ".pending" }
    static func pendingSignaturePath(in directory: DataDirectory) -> String { pendingPath(in: directory) + ".minisig" }

    /// The saved catalog, or nil when no sync has saved one yet. A save that was cut between its
    /// two renames (the new signature in place, the new catalog still pending) is read as the
    /// new pair it was saving, never as the new signature with the old catalog, which nobody
    /// changed but which would not verify.
    public static func load(from directory: DataDirectory) -> SavedCatalog? {
        func read(_ path: String) -> Data? {
            guard FileManager.default.sizeOfItem(atPath: path) <= CatalogSource.maximumBytes else { return nil }
            return FileManager.default.contents(atPath: path)
        }
        let signature = FileManager.default.contents(atPath: signaturePath(in: directory))
        if let pending = read(pendingPath(in: directory)), !FileManager.default.fileExists(atPath: pendingSignaturePath(in: directory)) {
            return SavedCatalog(bytes: pending, signature: signature)
        }
        guard let bytes = read(path(in: directory)) else { return nil }
        return SavedCatalog(bytes: bytes, signature: signature)
    }

    /// Saves it, holding the data-directory lock: the new catalog and signature are first
    /// written whole beside the old pair (`catalog.json.pending`, `.pending.minisig`), then the
    /// signature and the catalog are renamed into place. At every moment ``load(from:)`` reads one
    /// pair that belongs together: the old one until the first rename, the new one from then on.
    public func save(in directory: DataDirectory, lock: DirectoryLock) throws {
        try directory.prepare()
        let pending = Self.pendingPath(in: directory)
        let pendingSignature = Self.pendingSignaturePath(in: directory)
        if let signature { try AtomicFile.write(signature, to: pendingSignature) } else { unlink(pendingSignature) }
        try AtomicFile.write(bytes, to: pending)
        let signaturePath = Self.signaturePath(in: directory)
        if signature != nil {
            if let reason = DurableFile.rename(pendingSignature, over: signaturePath, folder: directory.path) {
                throw GeneralFailure(L.localized("cannot save %1$s: %2$s", "\(signaturePath)", "\(reason)"), kind: .io)
            }
        } else {
            unlink(signaturePath)
        }
        if let reason = DurableFile.rename(pending, over: Self.path(in: directory), folder: directory.path) {
            throw GeneralFailure(L.localized("cannot save %1$s: %2$s", "\(Self.path(in: directory))", "\(reason)"), kind: .io)
        }
    }

    /// The saved catalog checked as `sync` checked it: its signature by a trusted key (it sits in
    /// a folder the user can write, so it is never used on trust), then parsed. No expiry or
    /// rollback check: it was accepted when saved, and is read here only to be listed or passed on.
    public func verified(in directory: DataDirectory, trustedKeys: [String], requiresSignature: Bool) throws -> Catalog {
        let source = Self.path(in: directory)
        if let signature {
            let keys: [MinisignPublicKey]
            do {
                keys = try trustedKeys.map { try MinisignPublicKey(text: $0) }
            } catch {
                throw CatalogError(source: source, region: nil, reason: L.localized("a trusted key is not a minisign public key: %1$s", "\(errorMessage(error))"))
            }
            do {
                _ = try MinisignVerifier(trustedKeys: keys).verify(signatureFile: signature, message: bytes)
            } catch SignatureError.unknownKeyID(let keyID, _) {
                // Not a changed file: the policy or profile now trusts other keys (found by an attack).
                throw CatalogError(
                    source: source, region: nil,
                    reason: L.localized(
                        "it is signed by key %1$s, which this machine no longer trusts (the managed policy or the product profile names other keys now): run 'mapgate sync' to take the publisher's catalog signed by a trusted key",
                        keyID.hex))
            } catch {
                throw CatalogError(
                    source: source, region: nil,
                    reason: L.localized("its signature does not verify (%1$s): it was changed since 'mapgate sync' saved it; run 'mapgate sync' again", "\(errorMessage(error))"))
            }
        } else if requiresSignature {
            throw CatalogError(source: source, region: nil, reason: L.localized("it has no signature (%1$s.minisig): run 'mapgate sync' again", "\(source)"))
        }
        return try Catalog.parse(bytes, sourceURL: "file://" + source.percentEncoded(allowing: \.isURLPathAllowed))
    }
}
