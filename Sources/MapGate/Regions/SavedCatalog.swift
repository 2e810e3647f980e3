import FoundationEssentials

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

    /// The saved catalog, or nil when no sync has saved one yet.
    public static func load(from directory: DataDirectory) -> SavedCatalog? {
        let path = path(in: directory)
        guard FileManager.default.sizeOfItem(atPath: path) <= CatalogSource.maximumBytes,
            let bytes = FileManager.default.contents(atPath: path)
        else { return nil }
        let signature = FileManager.default.contents(atPath: signaturePath(in: directory))
        return SavedCatalog(bytes: bytes, signature: signature)
    }

    /// Saves it (signature first, then the catalog, each written whole and renamed into place),
    /// holding the data-directory lock. A reader between the two renames sees the new signature
    /// with the old catalog: a pair that does not verify, refused as a whole, never mixed.
    public func save(in directory: DataDirectory, lock: DirectoryLock) throws {
        try directory.prepare()
        let signaturePath = Self.signaturePath(in: directory)
        if let signature {
            try AtomicFile.write(signature, to: signaturePath)
        } else {
            try? FileManager.default.removeItem(atPath: signaturePath)
        }
        try AtomicFile.write(bytes, to: Self.path(in: directory))
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
