import FoundationEssentials
import MapGateBase

/// The JSON the tile server answers with, one Codable type per document (as the catalog and
/// TileJSON have): `/health`, `/` with `Accept: application/json`, `/styles.json`, a JSON route's
/// refusal while the gate is not open, and the generated `/REGION/style.json` (``MapLibreStyle``,
/// the Tiles folder's: the server is not its only user). Encoded with
/// keys sorted and slashes unescaped; a key whose value is nil is left out. Byte snapshots in
/// `ServerDocumentTests` hold the exact wire form.
public enum ServerDocument {
    /// `/health`.
    public struct Health: Codable, Sendable, Equatable {
        public struct Damage: Codable, Sendable, Equatable {
            public var id: String
            public var reason: String

            public init(id: String, reason: String) {
                self.id = id
                self.reason = reason
            }
        }

        /// `ok`, `degraded` (a region cannot be served) or `refusing` (the gate is not open).
        public var status: String
        /// `open`, `closed` or `failing`.
        public var gate: String
        public var regions: Int
        public var damaged: [Damage]?
        public var usesLeft: Int?
        /// Why the gate cannot be checked (`failing`).
        public var message: String?
        /// The version the closed gate asks for.
        public var requiredVersion: String?
        /// A newer version known (absent when up to date): what the viewer pages show.
        public var update: Update?

        /// `/health`'s `update`: the newer version, its release notes' first lines, the store's
        /// URL, when prompts start (ISO 8601), the uses left (and with the server's own counted
        /// use, as its question said them), and `state` (`grace`, `prompting`, `closed`).
        public struct Update: Codable, Sendable, Equatable {
            public var state: String
            public var version: String
            public var releaseNotes: [String]
            public var storeURL: String?
            public var promptsFrom: String?
            public var usesLeft: Int
            public var usesLeftThisIncluded: Int
        }

        public init(
            status: String, gate: String, regions: Int, damaged: [Damage]? = nil, usesLeft: Int? = nil, message: String? = nil,
            requiredVersion: String? = nil
        ) {
            self.status = status
            self.gate = gate
            self.regions = regions
            self.damaged = damaged
            self.usesLeft = usesLeft
            self.message = message
            self.requiredVersion = requiredVersion
        }
    }

    /// `/` with `Accept: application/json`: the regions served and the publisher's styles.
    public struct Index: Codable, Sendable, Equatable {
        public struct Region: Codable, Sendable, Equatable {
            public var id: String
            public var name: String
            public var version: String
            public var format: String
            public var tilejson: String
            public var viewer: String

            public init(id: String, name: String, version: String, format: String, tilejson: String, viewer: String) {
                (self.id, self.name, self.version, self.format, self.tilejson, self.viewer) = (id, name, version, format, tilejson, viewer)
            }
        }

        public struct Style: Codable, Sendable, Equatable {
            public var id: String
            public var name: String
            public var regions: [String]
            public var url: String
            /// The viewer of its first region with this style chosen.
            public var viewer: String

            public init(id: String, name: String, regions: [String], url: String, viewer: String) {
                (self.id, self.name, self.regions, self.url, self.viewer) = (id, name, regions, url, viewer)
            }
        }

        public var regions: [Region]
        public var styles: [Style]

        public init(regions: [Region], styles: [Style]) {
            self.regions = regions
            self.styles = styles
        }
    }

    /// `/styles.json`: the publisher's installed styles all of whose regions are served.
    public struct StyleList: Codable, Sendable, Equatable {
        public struct Style: Codable, Sendable, Equatable {
            public var id: String
            public var name: String
            public var version: String
            public var regions: [String]
            public var url: String

            public init(id: String, name: String, version: String, regions: [String], url: String) {
                (self.id, self.name, self.version, self.regions, self.url) = (id, name, version, regions, url)
            }
        }

        public var styles: [Style]

        public init(styles: [Style]) {
            self.styles = styles
        }
    }

    /// What a JSON route answers while the gate refuses: `gate-unavailable` (503: the gate's state
    /// cannot be checked) or `update-required` (403), which also names the version to install and
    /// the store's URL (`null` when there is none).
    public struct Refusal: Codable, Sendable, Equatable {
        public var error: String
        public var message: String
        public var requiredVersion: String?
        public var storeURL: String?

        public static func gateUnavailable(message: String) -> Refusal {
            Refusal(error: "gate-unavailable", message: message)
        }

        public static func updateRequired(message: String, requiredVersion: String, storeURL: String?) -> Refusal {
            Refusal(error: "update-required", message: message, requiredVersion: requiredVersion, storeURL: storeURL)
        }

        enum CodingKeys: String, CodingKey {
            case error, message, requiredVersion, storeURL
        }

        /// As synthesized, but an update-required refusal always has `storeURL`, `null` when unknown.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(error, forKey: .error)
            try container.encode(message, forKey: .message)
            guard let requiredVersion else { return }
            try container.encode(requiredVersion, forKey: .requiredVersion)
            try container.encode(storeURL, forKey: .storeURL)
        }
    }

    /// The bytes of `document` as the server sends them.
    public static func encode(_ document: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(document)
    }
}
