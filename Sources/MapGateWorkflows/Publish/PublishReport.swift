import FoundationEssentials

/// What `publish` did, or with `dryRun` would do, region by region.
public struct PublishReport: Sendable, Equatable {
    public enum Action: String, Sendable {
        case added, updated, unchanged, removed
    }

    public struct Region: Sendable, Equatable {
        public var id: String
        public var action: Action
        /// The version now offered (the one withdrawn, for `removed`).
        public var version: String
        /// The version offered before, when it differs or the region is removed.
        public var previousVersion: String?
        /// The package's path relative to the output folder (`packages/…`).
        public var package: String?
        /// Size and SHA-256 of the package; nil in a dry run for a package not made yet.
        public var size: Int64?
        public var sha256: String?
        /// The MBTiles file's size.
        public var installedSize: Int64?
        public var deltaCount: Int
    }

    /// One publisher's style (`INPUT_DIR/styles/NAME/`).
    public struct Style: Sendable, Equatable {
        public var id: String
        public var action: Action
        /// The version now offered (the one withdrawn, for `removed`): its content's digest.
        public var version: String
        public var previousVersion: String?
        /// The package's path relative to the output folder; nil for `removed`.
        public var package: String?
        /// The package's size; nil in a dry run for a package not made yet.
        public var size: Int64?
        /// The regions it draws.
        public var regions: [String]
    }

    public var regions: [Region]
    public var styles: [Style] = []
    /// Whether a new catalog was written (or would be, in a dry run).
    public var catalogChanged: Bool
    /// The serial of the catalog now in place (or that would be).
    public var serial: Int64?
    public var isDryRun: Bool
    /// Files removed from the output folder (packages and bases beyond `keep`), relative to it.
    public var removedFiles: [String]
    /// Things worth telling the publisher that did not stop the run (a delta left out and why).
    public var notes: [String]
}
