import FoundationEssentials
import MapGateBase

/// The catalog on the wire (`formatVersion` 1, docs/catalog.md): the one set of Codable types
/// that `publish` encodes and ``Catalog/parse(_:sourceURL:)`` decodes, before it checks what JSON
/// types cannot say (id patterns, ranges, hashes, URLs, versions).
public struct CatalogFile: Codable, Sendable, Equatable {
    public var formatVersion: Int
    public var publisher: String
    public var generated: String?
    public var expires: String?
    public var serial: Int64?
    public var minimumAppVersion: String?
    public var gate: PublisherGate?
    public var regions: [Entry<Region>]
    public var styles: [Entry<Style>]?
    /// Why `styles` could not be read at all (not a list): said, and no reason to refuse the map
    /// data. Never encoded.
    public var stylesProblem: String?

    private enum CodingKeys: String, CodingKey {
        case formatVersion, publisher, generated, expires, serial, minimumAppVersion, gate, regions, styles
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        publisher = try container.decode(String.self, forKey: .publisher)
        generated = try container.decodeIfPresent(String.self, forKey: .generated)
        expires = try container.decodeIfPresent(String.self, forKey: .expires)
        serial = try container.decodeIfPresent(Int64.self, forKey: .serial)
        minimumAppVersion = try container.decodeIfPresent(String.self, forKey: .minimumAppVersion)
        gate = try container.decodeIfPresent(PublisherGate.self, forKey: .gate)
        regions = try container.decode([Entry<Region>].self, forKey: .regions)
        do {
            styles = try container.decodeIfPresent([Entry<Style>].self, forKey: .styles)
        } catch let error as DecodingError {
            stylesProblem = CatalogFile.reason(error)
        }
    }

    public init(
        publisher: String, generated: String?, expires: String?, serial: Int64?, minimumAppVersion: String? = nil, gate: PublisherGate? = nil,
        regions: [Region], styles: [Style] = []
    ) {
        formatVersion = 1
        self.publisher = publisher
        self.generated = generated
        self.expires = expires
        self.serial = serial
        self.minimumAppVersion = minimumAppVersion
        self.gate = gate
        self.regions = regions.sorted { $0.id < $1.id }.map { .valid($0) }
        self.styles = styles.isEmpty ? nil : styles.sorted { $0.id < $1.id }.map { .valid($0) }
    }

    /// A region on offer.
    public struct Region: Codable, Sendable, Equatable {
        public var id: String
        public var name: String?
        public var version: String
        public var url: String
        public var size: Int64
        public var sha256: String
        public var installedSize: Int64
        public var format: String
        public var bounds: [Double]?
        public var minzoom: Int
        public var maxzoom: Int
        public var minimumAppVersion: String?
        public var contentHash: String?
        public var deltas: [Entry<Delta>]?

        /// The memberwise initializer, written out for the targets above (Publish writes catalogs).
        package init(
            id: String, name: String? = nil, version: String, url: String, size: Int64, sha256: String, installedSize: Int64,
            format: String, bounds: [Double]? = nil, minzoom: Int, maxzoom: Int, minimumAppVersion: String? = nil,
            contentHash: String? = nil, deltas: [Entry<Delta>]? = nil
        ) {
            self.id = id
            self.name = name
            self.version = version
            self.url = url
            self.size = size
            self.sha256 = sha256
            self.installedSize = installedSize
            self.format = format
            self.bounds = bounds
            self.minzoom = minzoom
            self.maxzoom = maxzoom
            self.minimumAppVersion = minimumAppVersion
            self.contentHash = contentHash
            self.deltas = deltas
        }
    }

    /// A tile delta from an earlier version of a region to its current one.
    public struct Delta: Codable, Sendable, Equatable {
        public var fromVersion: String
        public var fromHash: String
        public var url: String
        public var size: Int64
        public var sha256: String

        /// The memberwise initializer, written out for the targets above (Publish writes catalogs).
        package init(fromVersion: String, fromHash: String, url: String, size: Int64, sha256: String) {
            self.fromVersion = fromVersion
            self.fromHash = fromHash
            self.url = url
            self.size = size
            self.sha256 = sha256
        }
    }

    /// A publisher's style (``StyleBundle`` package).
    public struct Style: Codable, Sendable, Equatable {
        public var id: String
        public var name: String?
        public var version: String
        public var url: String
        public var size: Int64
        public var sha256: String
        public var installedSize: Int64
        public var regions: [String]

        /// The memberwise initializer, written out for the targets above (Publish writes catalogs).
        package init(
            id: String, name: String? = nil, version: String, url: String, size: Int64, sha256: String, installedSize: Int64,
            regions: [String]
        ) {
            self.id = id
            self.name = name
            self.version = version
            self.url = url
            self.size = size
            self.sha256 = sha256
            self.installedSize = installedSize
            self.regions = regions
        }
    }

    /// One entry of a list, decoded or not: a bad entry is kept with the reason (and its id when
    /// it has one), so it spoils neither the document nor the other entries.
    public enum Entry<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
        case valid(Value)
        case invalid(id: String?, reason: String)

        public var value: Value? {
            if case .valid(let value) = self { return value }
            return nil
        }

        private enum IDKey: String, CodingKey { case id }

        public init(from decoder: any Decoder) throws {
            do {
                self = .valid(try Value(from: decoder))
            } catch let error as DecodingError {
                let id = try? decoder.container(keyedBy: IDKey.self).decode(String.self, forKey: .id)
                self = .invalid(id: id, reason: CatalogFile.reason(error, below: decoder.codingPath.count))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            guard case .valid(let value) = self else {
                throw EncodingError.invalidValue(self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "an invalid entry"))
            }
            try value.encode(to: encoder)
        }
    }

    /// The bytes `publish` writes: keys sorted, two-space indentation, slashes unescaped, a final
    /// newline. The same catalog always gives the same bytes (it is signed).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// The keys whose values are integers, wherever they are in a catalog.
    private static let integerKeys: Set<String> = [
        "formatVersion", "serial", "size", "installedSize", "minzoom", "maxzoom", "graceDays", "maxPrompts", "closeAfterDays",
    ]

    /// Foundation's decoder says only "The given data was not valid JSON." of valid JSON with a
    /// number that does not fit where an integer is expected (`"size": 106496.5`, `1e30`): the
    /// first such number (keys in order), as `(region id, "installedSize 106496.5 is not an
    /// integer")`, the path below a region (or style) when it is in one; nil when there is none.
    static func nonIntegerNumber(in data: Data) -> (region: String?, reason: String)? {
        guard let document = try? JSONValue(parsing: data) else { return nil }
        func find(_ value: JSONValue, path: String, region: String?) -> (region: String?, reason: String)? {
            switch value {
            case .object(let fields):
                for key in fields.keys.sorted() {
                    let child = fields[key]!
                    let here = path.isEmpty ? key : path + "." + key
                    if integerKeys.contains(key), case .double(let number) = child {
                        let whole = number.isFinite && number == number.rounded()
                        let reason = whole
                            ? L.localized("%1$s %2$s is out of range for an integer", here, "\(number)")
                            : L.localized("%1$s %2$s is not an integer", here, "\(number)")
                        return (region, reason)
                    }
                    if let found = find(child, path: here, region: region) { return found }
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    // Below a region (or style) entry, the path starts at it, which is named by its id.
                    if path == "regions" || path == "styles", let id = item["id"]?.stringValue {
                        if let found = find(item, path: "", region: id) { return found }
                    } else if let found = find(item, path: path + "[\(index)]", region: region) {
                        return found
                    }
                }
            default:
                break
            }
            return nil
        }
        return find(document, path: "", region: nil)
    }

    /// What a decoding error says, in the catalog's words: `size is not an integer`,
    /// `deltas[0].url is missing` (the path below the first `depth` keys, which the caller names).
    package static func reason(_ error: DecodingError, below depth: Int = 0) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys.dropFirst(depth) {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text
        }
        func kind(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: L.localized("a string")
            case is Int.Type, is Int64.Type: L.localized("an integer")
            case is Double.Type: L.localized("a number")
            case is Bool.Type: L.localized("true or false")
            case is [Any].Type, is [String].Type, is [Double].Type: L.localized("an array")
            default: L.localized("an object")
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return L.localized("%1$s is missing", path(context.codingPath + [key]))
        case .typeMismatch(let type, let context):
            let where_ = path(context.codingPath)
            return where_.isEmpty ? L.localized("not %1$s", kind(type)) : L.localized("%1$s is not %2$s", where_, kind(type))
        case .valueNotFound(let type, let context):
            return L.localized("%1$s is null, not %2$s", path(context.codingPath), kind(type))
        case .dataCorrupted(let context):
            let where_ = path(context.codingPath)
            // A number that is not an integer (1.5, 1e400) says so in its own words.
            if context.debugDescription.contains("does not fit") {
                return where_.isEmpty ? L.localized("not an integer") : L.localized("%1$s is not an integer", where_)
            }
            // Foundation's own words (English).
            return where_.isEmpty ? context.debugDescription : "\(where_): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
