import FoundationEssentials
import Glibc
import MapGateBase

/// A deployment's replacement of the ``ProductProfile``'s values: `/etc/mapgate/policy.json`, or,
/// only where that file does not exist, the file `MAPGATE_POLICY` names (see
/// ``Locations/policyFile(environment:systemPath:)``; the library reads no environment).
///
/// Honoured only when the file and every folder above it are owned by root and writable by nobody
/// else (a sticky folder such as `/tmp` is fine): see ``TrustedFile``. Root ownership alone is not
/// enough to loosen the profile, though: a user can be "root" of a user namespace of their own and
/// own every file there. So a policy may only make the rules stricter (``GateSettings/loosenedKeys(comparedTo:)``)
/// unless `policy.json.minisig` beside it is a valid minisign signature by one of the profile's
/// ``ProductProfile/policyKeys`` (docs/decisions/signed-policy.md). Anything else, like an unknown
/// key, a bad value or a bad signature, is an error (exit 64), never ignored.
public enum ManagedPolicy {
    public static let defaultPath = "/etc/mapgate/policy.json"

    /// The profile with the policy at `path` applied. A missing file means "no policy" unless
    /// `mustExist` (a path the user named).
    ///
    /// - Parameter afterResolving: for tests, runs between resolving the path and reading it.
    public static func apply(
        path: String, mustExist: Bool, to profile: GateSettings = ProductProfile.settings, signers: [String] = ProductProfile.policyKeys,
        now: Date = Date(), afterResolving: () -> Void = {}
    ) throws -> GateSettings {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if mustExist || errno != ENOENT {
                throw ConfigurationError(file: .managedPolicy, path: path, key: nil, reason: SystemErrorReason.text(errno))
            }
            return profile
        }
        let data: Data
        do {
            data = try TrustedFile.read(path, afterResolving: afterResolving)
        } catch let error as TrustedFile.Violation {
            throw ConfigurationError(file: .managedPolicy, path: path, key: nil, reason: L.localized("refusing it: %1$s", "\(error.description)"))
        }
        var settings = try parse(data, path: path, over: profile)
        try checkScope(settings, path: path, now: now, machineID: machineID())
        let signaturePath = signaturePath(of: path)
        var signatureInfo = stat()
        if lstat(signaturePath, &signatureInfo) == 0 {
            try checkSignature(at: signaturePath, of: data, signers: signers, policyPath: path)
            settings.managedPolicySigned = true
        } else {
            if let key = settings.loosenedKeys(comparedTo: profile).first {
                throw ConfigurationError(
                    file: .managedPolicy, path: path, key: key,
                    reason: L.localized("loosens the publisher's rules, which an unsigned policy may not do (it may only make them stricter); the publisher must sign it (%1$s)", "\(PathText.lastComponent(signaturePath))"))
            }
            // Catalog keys it adds sign map data; their catalogs' gate rules may only tighten.
            if settings.trustedKeys != profile.trustedKeys { settings.gateRuleKeys = profile.gateRuleKeys ?? profile.trustedKeys }
        }
        return settings
    }

    /// Where the policy's signature is: `PATH.minisig` beside the path named, or, when there is
    /// none and the path is a symbolic link, beside the file it leads to (a vendor's folder holding
    /// both, linked from `/etc/mapgate`). Either is read under the same rules as the policy.
    static func signaturePath(of path: String) -> String {
        let beside = path + ".minisig"
        var info = stat()
        guard lstat(beside, &info) != 0, let resolved = realpath(path, nil) else { return beside }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return real == path ? beside : real + ".minisig"
    }

    /// A policy that names its machines or an end is refused elsewhere or after it (issue 35,
    /// item 7): a signed policy copied to another machine, or kept past its time, is not a bearer
    /// token. (Per user, `/etc/machine-id` and the clock can be faked in a namespace of one's own;
    /// in system mode the service reads the policy outside every user's namespaces.)
    static func checkScope(_ settings: GateSettings, path: String, now: Date, machineID: String?) throws {
        if let machines = settings.policyMachines, !machines.contains(machineID ?? "") {
            throw ConfigurationError(
                file: .managedPolicy, path: path, key: "machines",
                reason: L.localized("it is for other machines, not this one (%1$s)", machineID ?? L.localized("no /etc/machine-id")))
        }
        if let expires = settings.policyExpires, now >= expires {
            throw ConfigurationError(file: .managedPolicy, path: path, key: "expires", reason: L.localized("it expired on %1$s", LocalTime.text(expires)))
        }
    }

    /// This machine's id (`/etc/machine-id`), lowercased; nil when it cannot be read.
    public static func machineID() -> String? {
        guard let data = FileManager.default.contents(atPath: "/etc/machine-id") else { return nil }
        let text = String(String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? "").trimmingWhitespace().lowercased()
        return text.isEmpty ? nil : text
    }

    /// A signature beside the policy must be good, by one of `signers`: a bad one is never ignored.
    private static func checkSignature(at path: String, of policy: Data, signers: [String], policyPath: String) throws {
        func refuse(_ reason: String) -> ConfigurationError {
            ConfigurationError(file: .managedPolicy, path: policyPath, key: nil, reason: L.localized("refusing it: its signature %1$s %2$s", "\(path)", "\(reason)"))
        }
        let signature: Data
        do {
            signature = try TrustedFile.read(path)
        } catch let error as TrustedFile.Violation {
            throw refuse(L.localized("is not trusted: %1$s", "\(error.description)"))
        }
        guard !signers.isEmpty else { throw refuse(L.localized("cannot be checked: this build of mapgate trusts no key to sign policies")) }
        do {
            let keys = try signers.map { try MinisignPublicKey(text: $0) }
            _ = try MinisignVerifier(trustedKeys: keys, acceptsLegacySignatures: false).verify(signatureFile: signature, message: policy)
        } catch let error as SharedLibraryError {
            throw error  // libcrypto missing: exit 69 naming the package, not "a bad signature"
        } catch {
            throw refuse(L.localized("is not a valid signature by the publisher's policy key (%1$s)", "\(errorMessage(error))"))
        }
    }

    /// Parses a policy's JSON text over `profile`.
    public static func parse(_ data: Data, path: String, over profile: GateSettings) throws -> GateSettings {
        var reader = try JSONFields(data: data, path: path, file: .managedPolicy)
        var settings = profile
        if let appID = try reader.integer("appID", range: 1...Int.max) { settings.appID = appID }
        if let bundleID = try reader.string("bundleID", valid: { !$0.isEmpty && !$0.contains(where: \.isWhitespace) }) {
            settings.bundleID = bundleID
        }
        if let country = try reader.string("country", must: L.localized("a country's two letters (jp, kr, cn, tw, us)"), valid: { $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isLetter } }) {
            settings.country = country.lowercased()
        }
        if let url = try reader.url("lookupURL", schemes: ["http", "https"]) { settings.lookupURL = url }
        if let file = try reader.string("lookupCAFile", must: JSONFields.absolutePath, valid: { $0.hasPrefix("/") }) { settings.lookupCAFile = file }
        if let days = try reader.integer("graceDays", range: 0...365) { settings.graceDays = days }
        if let prompts = try reader.integer("maxPrompts", range: 0...100) { settings.maxPrompts = prompts }
        if let hours = try reader.number("checkIntervalHours", range: 0...GateSettings.maximumCheckIntervalHours) {
            settings.checkIntervalHours = hours
        }
        if let days = try reader.integer("closeAfterDays", range: 0...3650) { settings.closeAfterDays = days }
        if let days = try reader.integer("firstLookupDays", range: 0...3650) { settings.firstLookupDays = days }
        if let url = try reader.url("catalogURL", schemes: ["http", "https", "file"]) { settings.catalogURL = url }
        if let keys = try reader.strings("trustedKeys", valid: { $0.hasPrefix("RW") && $0.count == 56 }) { settings.trustedKeys = keys }
        if let required = try reader.boolean("requireSignedCatalog") { settings.requireSignedCatalog = required }
        if let insecure = try reader.boolean("allowInsecureLookup") { settings.allowInsecureLookup = insecure }
        if let proxy = try reader.boolean("lookupUsesProxy") { settings.lookupUsesProxy = proxy }
        if let mode = try reader.string("mode", must: L.localized("\"per-user\" or \"system\""), valid: { MachineMode(rawValue: $0) != nil }) { settings.mode = MachineMode(rawValue: mode)! }
        if let socket = try reader.string("systemSocket", must: L.localized("an absolute path (starting with /) of fewer than 108 bytes"), valid: { $0.hasPrefix("/") && $0.utf8.count < 108 }) { settings.systemSocket = socket }
        if let port = try reader.integer("systemTilePort", range: 1...65535) { settings.systemTilePort = UInt16(port) }
        if let user = try reader.string("systemUser", valid: { !$0.isEmpty && !$0.contains(where: \.isWhitespace) }) { settings.systemUser = user }
        if let file = try reader.string("credentialsFile", must: JSONFields.absolutePath, valid: { $0.hasPrefix("/") }) { settings.credentialsFile = file }
        if let machines = try reader.strings("machines", valid: { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }) { settings.policyMachines = machines.map { $0.lowercased() } }
        if let expires = try reader.string("expires", must: L.localized("a date and time in ISO 8601 (2027-01-01T00:00:00Z)"), valid: { ISODate.parse($0) != nil }) { settings.policyExpires = ISODate.parse(expires) }
        try reader.rejectUnknownKeys(known: GateSettings.keys.map(\.name))
        if settings.lookupURL.lowercased().hasPrefix("http:"), !settings.allowInsecureLookup {
            throw ConfigurationError(
                file: .managedPolicy, path: path, key: "lookupURL",
                reason: L.localized("%1$s is plain HTTP, whose answers anyone on the path can forge; use https, or set \"allowInsecureLookup\": true", "\(settings.lookupURL)"))
        }
        return settings
    }
}
