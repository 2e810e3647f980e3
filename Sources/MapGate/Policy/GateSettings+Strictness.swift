import FoundationEssentials

extension GateSettings {
    /// The keys whose values here are looser than `profile`'s: what an unsigned managed policy may
    /// not do (``ManagedPolicy``). Stricter is fewer grace days or prompts, a closing date (or an
    /// earlier one), more frequent lookups, a required catalog signature, and another catalog URL
    /// (the catalog is verified all the same). Everything that decides which store answer is
    /// believed (the app, the storefront, the lookup URL and its CA, plain HTTP, a proxy) and which
    /// keys may sign catalogs (whose `gate` rules then apply) is looser, since it lets answers or
    /// rules from elsewhere in.
    public func loosenedKeys(comparedTo profile: GateSettings) -> [String] {
        var keys: [String] = []
        if appID != profile.appID { keys.append("appID") }
        if bundleID != profile.bundleID { keys.append("bundleID") }
        if country != profile.country { keys.append("country") }
        if lookupURL != profile.lookupURL { keys.append("lookupURL") }
        if lookupCAFile != profile.lookupCAFile { keys.append("lookupCAFile") }
        if graceDays > profile.graceDays { keys.append("graceDays") }
        if maxPrompts > profile.maxPrompts { keys.append("maxPrompts") }
        if checkIntervalHours > profile.checkIntervalHours { keys.append("checkIntervalHours") }
        if let limit = profile.closeAfterDays, closeAfterDays.map({ $0 > limit }) ?? true { keys.append("closeAfterDays") }
        if !Set(trustedKeys).isSubset(of: profile.trustedKeys) { keys.append("trustedKeys") }
        if profile.requireSignedCatalog, !requireSignedCatalog { keys.append("requireSignedCatalog") }
        if allowInsecureLookup, !profile.allowInsecureLookup { keys.append("allowInsecureLookup") }
        if lookupUsesProxy, !profile.lookupUsesProxy { keys.append("lookupUsesProxy") }
        return keys
    }
}
