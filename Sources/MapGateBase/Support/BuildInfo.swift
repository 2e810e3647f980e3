/// Facts fixed when mapgate is built.
public enum BuildInfo {
    /// The installed version of the app: its `CFBundleShortVersionString`.
    ///
    /// The version gate compares the store's version with this one. No flag, variable or
    /// configuration key can change it; that would be a way around the gate.
    public static let version = "1.4.0"

    /// The `User-Agent` of every request mapgate makes.
    public static var userAgent: String { "mapgate/\(version)" }
}
