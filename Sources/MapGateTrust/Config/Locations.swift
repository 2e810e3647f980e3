import FoundationEssentials
import Glibc
import MapGateBase

/// Where the configuration file and the data directory are, from flags and the environment.
/// The caller hands the environment in; the library never reads it on its own.
public enum Locations {
    /// `--config FILE`, else `MAPGATE_CONFIG`, else `$XDG_CONFIG_HOME/mapgate/config.json`
    /// (`~/.config` when unset). Only an explicitly named file must exist.
    public static func configFile(flag: String?, environment: [String: String]) -> (path: String, mustExist: Bool) {
        if let flag { return (flag, true) }
        if let path = environment["MAPGATE_CONFIG"], !path.isEmpty { return (path, true) }
        return (base(environment, xdg: "XDG_CONFIG_HOME", fallback: ".config") + "/mapgate/config.json", false)
    }

    /// `--data-dir DIR`, else `MAPGATE_DATA_DIR`, else `$XDG_DATA_HOME/mapgate`
    /// (`~/.local/share` when unset).
    public static func dataDirectory(flag: String?, environment: [String: String]) -> DataDirectory {
        if let flag { return DataDirectory(path: flag) }
        if let path = environment["MAPGATE_DATA_DIR"], !path.isEmpty { return DataDirectory(path: path) }
        return DataDirectory(path: base(environment, xdg: "XDG_DATA_HOME", fallback: ".local/share") + "/mapgate")
    }

    /// The gate's own state folder: `$XDG_STATE_HOME/mapgate` (`~/.local/state` when unset).
    /// It belongs to the user, not to a data directory, so a new `--data-dir` starts no new gate.
    public static func stateFolder(environment: [String: String]) -> String {
        base(environment, xdg: "XDG_STATE_HOME", fallback: ".local/state") + "/mapgate"
    }

    /// The managed policy: `/etc/mapgate/policy.json` whenever it exists (a link or anything else
    /// there counts: it is then judged as the policy), else the file `MAPGATE_POLICY` names (which
    /// must exist), else none. An administrator's policy can never be replaced from the
    /// environment; `MAPGATE_POLICY` serves machines without one (tests, a deployment that
    /// installs its policy elsewhere) and still only names a root-owned file.
    public static func policyFile(environment: [String: String], systemPath: String = ManagedPolicy.defaultPath) -> (path: String, mustExist: Bool) {
        var info = stat()
        if lstat(systemPath, &info) == 0 { return (systemPath, true) }
        if let path = environment["MAPGATE_POLICY"], !path.isEmpty { return (path, true) }
        return (systemPath, false)
    }

    private static func base(_ environment: [String: String], xdg: String, fallback: String) -> String {
        if let value = environment[xdg], value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/" + fallback
    }
}
