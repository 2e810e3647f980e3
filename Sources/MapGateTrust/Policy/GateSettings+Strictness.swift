import FoundationEssentials

extension GateSettings {
    /// The keys whose values here loosen the gate compared with `profile`: what an unsigned managed
    /// policy may not do (``ManagedPolicy``). Stricter is fewer grace days or prompts, a closing
    /// date (or an earlier one), more frequent lookups. Everything that decides which store answer
    /// is believed (the app, the storefront, the lookup URL and its CA, plain HTTP, a proxy) is
    /// looser, since it lets answers from elsewhere in. The catalog's keys, URL and whether it must
    /// be signed decide which map data is taken, not the gate: a key such a policy adds signs
    /// catalogs whose `gate` rules may only tighten it (``gateRuleKeys``).
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
        if let limit = profile.firstLookupDays, firstLookupDays.map({ $0 > limit }) ?? true { keys.append("firstLookupDays") }
        if allowInsecureLookup, !profile.allowInsecureLookup { keys.append("allowInsecureLookup") }
        if lookupUsesProxy, !profile.lookupUsesProxy { keys.append("lookupUsesProxy") }
        // System mode is stricter than per-user; once the profile has it, its service is the profile's.
        if profile.mode == .system {
            if mode != .system { keys.append("mode") }
            if systemSocket != profile.systemSocket { keys.append("systemSocket") }
            if systemUser != profile.systemUser { keys.append("systemUser") }
        }
        return keys
    }
}
