import Foundation

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

    private static func base(_ environment: [String: String], xdg: String, fallback: String) -> String {
        if let value = environment[xdg], value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/" + fallback
    }
}
