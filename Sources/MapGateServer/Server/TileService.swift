import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust
import MapGateWorkflows
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What every worker of a tile server shares: the regions on offer (kept current while the
/// server runs), the gate, the metrics and the settings. Knows nothing of sockets.
public final class TileService: Sendable {
    /// A served region: its record and the TileJSON facts read when its file was last seen.
    public struct Region: Sendable {
        public var record: InstalledRegion
        public var path: String
        /// The file as it was read: an update replaces it by rename, so a new inode means a new file.
        public var file: FileIdentity
        /// The file checked, held open: the workers open it, not whatever the path names by then.
        public var held: HeldFile? = nil
        public var name: String
        public var attribution: String?
        public var description: String?
        public var bounds: [Double]
        public var center: [Double]
        public var minzoom: Int
        public var maxzoom: Int
        /// `vector_layers` from the `json` metadata of a `pbf` region, as JSON text.
        public var vectorLayersJSON: String?
        /// The raw `json` metadata (for the vector style's layers).
        public var metadataJSON: String? = nil
        /// The pixels of a raster tile's side, from the metadata's `tileSize` (as QGIS and
        /// `pmtiles convert` write it) when a power of two from 64 to 4096; else 256.
        public var tileSize: Int = 256
    }


    /// An installed publisher's style, as its file was when last read.
    public struct Style: Sendable {
        public var bundle: StyleBundle
        public var file: FileIdentity
        /// The sprite files, each held once and shared by every answer that sends it (a 42 MB
        /// sprite asked for by 60 clients is 42 MB, not 60 copies).
        public let sprites: [String: HTTPBodyBytes]

        public init(bundle: StyleBundle, file: FileIdentity) {
            self.bundle = bundle
            self.file = file
            sprites = bundle.sprites.mapValues(HTTPBodyBytes.init)
        }
    }

    /// An installed region that cannot be served: its file is missing, cut short or unreadable.
    public struct Damage: Sendable, Equatable {
        public var id: String
        public var reason: String
    }

    private let current: Locked<[String: Region]>
    /// Installed regions whose file cannot be served, by id: the reason.
    private let currentDamage = Locked<[String: String]>([:])
    /// Each damaged region's record and file as they were when found damaged: looked at again
    /// only when either changes (found by an attack: a damaged 1 GB file of the right size was
    /// hashed every second, for good).
    private let damagedFiles = Locked<[String: (record: InstalledRegion, file: FileIdentity?)]>([:])
    private let currentStyles: Locked<[String: Style]>
    /// Installed styles that cannot be served, by id: the reason (said once, ``Changes/damagedStyles``).
    private let currentStyleDamage = Locked<[String: String]>([:])
    public let gate: GateWatch
    public let metrics: ServerMetrics
    /// Tile answers shared by every worker (dropped whole when the regions change).
    public let tileCache: TileResponseCache
    /// The address the server was asked to bind, for URLs when a request has no usable Host.
    public let fallbackHost: String
    /// The mirror offered on the LAN (`serve --share`), or nil.
    public let share: MirrorShare?
    /// The use of the server's start (``TileServer``): the first tile answered delivers it, and
    /// the gate's record is told before that tile is sent. Nil for a service without one (tests).
    public let startUse: (any ServingUse)?

    /// What the user's configuration points the server at: replaced whole on a reload (SIGHUP).
    private struct Assets: Sendable {
        var leafletPath: String
        var maplibrePath: String
        var glyphs: GlyphService
    }

    private let assets: Locked<Assets>
    public var leafletPath: String { assets.withLock { $0.leafletPath } }
    public var maplibrePath: String { assets.withLock { $0.maplibrePath } }
    /// Glyphs for the vector styles' labels (`/fonts/…`).
    public var glyphs: GlyphService { assets.withLock { $0.glyphs } }

    /// Points the server at another Leaflet, MapLibre or font folders (the configuration was
    /// reloaded): requests from now on use them; those in flight finish with the old ones.
    public func reconfigure(leafletPath: String, maplibrePath: String, glyphs: GlyphService) {
        let next = Assets(leafletPath: leafletPath, maplibrePath: MapLibreFiles.folder(configured: maplibrePath), glyphs: glyphs)
        assets.withLock { $0 = next }
    }

    public init(
        regions: [Region], damaged: [Damage] = [], styles: [Style] = [], gate: GateWatch, leafletPath: String, maplibrePath: String = MapLibreFiles.localPath, fallbackHost: String,
        metrics: ServerMetrics = ServerMetrics(), glyphs: GlyphService = GlyphService(folders: FontLibrary.systemFolders),
        tileCache: TileResponseCache = TileResponseCache(), share: MirrorShare? = nil, startUse: (any ServingUse)? = nil
    ) {
        self.startUse = startUse
        self.tileCache = tileCache
        self.share = share
        assets = Locked(Assets(leafletPath: leafletPath, maplibrePath: MapLibreFiles.folder(configured: maplibrePath), glyphs: glyphs))
        current = Locked(Dictionary(uniqueKeysWithValues: regions.map { ($0.record.id, $0) }))
        currentDamage.withLock { $0 = Dictionary(damaged.map { ($0.id, $0.reason) }) { first, _ in first } }
        currentStyles = Locked(Dictionary(uniqueKeysWithValues: styles.map { ($0.bundle.id, $0) }))
        self.gate = gate
        self.fallbackHost = fallbackHost
        self.metrics = metrics
    }

    /// The regions served right now.
    public var regions: [String: Region] { current.withLock { $0 } }
    /// How many times the regions on offer changed: a worker holding files open compares it with
    /// the last it saw, and closes those of regions removed or replaced since (``TileRequestHandler``).
    let generation = Atomic<Int>(0)

    public func region(_ id: String) -> Region? { current.withLock { $0[id] } }

    /// Installed regions whose file cannot be served right now, by id, with the reason.
    public var damaged: [String: String] { currentDamage.withLock { $0 } }

    /// The publisher's styles served right now.
    public var styles: [String: Style] { currentStyles.withLock { $0 } }

    public func style(_ id: String) -> Style? { currentStyles.withLock { $0[id] } }

    /// The styles all of whose regions are served, sorted by id (one drawing a region that is not
    /// would draw a source that 404s).
    public var drawableStyles: [Style] {
        let served = regions
        return styles.values.filter { $0.bundle.regions.allSatisfy { served[$0] != nil } }.sorted { $0.bundle.id < $1.bundle.id }
    }

    /// The styles that draw region `id` (all of whose regions are served), sorted by id.
    public func styles(drawing id: String) -> [Style] {
        drawableStyles.filter { $0.bundle.regions.contains(id) }
    }

    /// What changed in one look at the installed regions.
    public struct Changes: Sendable, Equatable {
        public var added: [String] = []
        public var updated: [String] = []
        /// No longer installed (its record is gone): 404.
        public var removed: [String] = []
        /// Still installed, but its file cannot be served (newly, or for another reason than
        /// before): its answers are 500 with the reason until it is installed again.
        public var damaged: [Damage] = []
        /// Installed styles that cannot be served (unreadable, too large, not a style): 404 until
        /// installed again, said once with the reason (issue 43: they went unserved without a word).
        public var damagedStyles: [Damage] = []
        /// Still the installed file by its SHA-256, only its stamp changed (touched, or copied back
        /// as it was): re-read, and not said to be updated (found by an attack: `touch` was
        /// logged "updated: now serving the new file").
        public var reopened: [String] = []
        public var isEmpty: Bool {
            added.isEmpty && updated.isEmpty && removed.isEmpty && damaged.isEmpty && damagedStyles.isEmpty && reopened.isEmpty
        }
    }

    /// Re-reads the installed regions (records, and each file's identity) and swaps in what
    /// changed: an installed region is served, an updated one re-read, a removed one is 404, one
    /// whose file is missing, cut short or unreadable is damaged (said, with the reason).
    @discardableResult
    public func refresh(from library: RegionLibrary) throws -> Changes {
        let old = regions
        let oldDamage = damaged
        var next: [String: Region] = [:]
        var nextDamage: [String: String] = [:]
        var changes = Changes()
        for record in try library.installed() {
            let path = library.directory.regionPath(record.id)
            let identity = FileIdentity(path: path)
            // A record whose only change is the stamp of the file served (recorded by this server
            // or another command, ``RegionLibrary/recordStamp(_:of:)``) is the same install.
            if let known = old[record.id], known.file == identity, known.record.isSameInstall(as: record, ofFile: identity) {
                next[record.id] = known
                continue
            }
            if let reason = oldDamage[record.id], let seen = damagedFiles.withLock({ $0[record.id] }), seen.record == record, seen.file == identity {
                nextDamage[record.id] = reason
                continue
            }
            do {
                next[record.id] = try Self.loadRegion(record, path: path, recordingStampIn: library)
                if old[record.id] == nil, oldDamage[record.id] == nil {
                    changes.added.append(record.id)
                } else if old[record.id]?.record.isSameInstall(as: record, ofFile: identity) == true {
                    // The same record (or it with the new file's stamp, recorded by the command that
                    // hashed it: found by an attack, a `list` run right after a restore made the
                    // server say "updated"), and the file checked against it (`loadRegion`): the same bytes.
                    changes.reopened.append(record.id)
                } else {
                    changes.updated.append(record.id)
                }
            } catch {
                // The records were read before the files (found by an attack: while this look
                // hashed a touched region, a `sync` put b's new file in place, and b's new file was
                // held to b's old record: "damaged", 500 for a second). Looked at again with the
                // record as it stands now (not kept as served while a writer works: found by the next
                // attack, that hid another region's damage for as long as a `sync` ran, or stood stopped).
                if let fresh = try? library.installed().first(where: { $0.id == record.id }), fresh != record,
                    let region = try? Self.loadRegion(fresh, path: path)
                {
                    next[record.id] = region
                    changes.updated.append(record.id)
                    continue
                }
                let reason = errorMessage(error)
                damagedFiles.withLock { $0[record.id] = (record, identity) }
                nextDamage[record.id] = reason
                if oldDamage[record.id] != reason { changes.damaged.append(Damage(id: record.id, reason: reason)) }
            }
        }
        changes.removed = Set(old.keys).union(oldDamage.keys).filter { next[$0] == nil && nextDamage[$0] == nil }.sorted()
        if !changes.isEmpty || nextDamage != oldDamage {
            current.withLock { $0 = next }
            currentDamage.withLock { $0 = nextDamage }
            generation.add(1, ordering: .releasing)
            // Entries of a replaced file are never answered (each is checked against the file it
            // came from); dropping them all gives their memory back at once.
            tileCache.removeAll()
        }
        changes.damagedStyles = refreshStyles(in: library.directory)
        return changes
    }

    /// Re-reads `<data>/styles/`: a style installed or updated (by rename) is served, a removed one
    /// 404. Returns the styles newly found damaged (or damaged for another reason than before).
    func refreshStyles(in directory: DataDirectory) -> [Damage] {
        let old = styles
        let (next, damage) = Self.loadStyles(in: directory, known: old)
        let isSame = next.count == old.count && next.allSatisfy { old[$0.key]?.file == $0.value.file }
        if !isSame { currentStyles.withLock { $0 = next } }
        let oldDamage = currentStyleDamage.withLock { known in
            defer { known = damage }
            return known
        }
        return damage.filter { oldDamage[$0.key] != $0.value }.map { Damage(id: $0.key, reason: $0.value) }.sorted { $0.id < $1.id }
    }

    /// The installed styles that pass ``StyleBundle/decode(_:expectedID:)`` (a file already read,
    /// same identity, is not read again), and the others with the reason they cannot be served.
    public static func loadStyles(in directory: DataDirectory, known: [String: Style] = [:]) -> (styles: [String: Style], damaged: [String: String]) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.stylesPath)) ?? []
        var styles: [String: Style] = [:]
        var damaged: [String: String] = [:]
        for name in names where name.hasSuffix(".json") {
            let id = String(name.dropLast(5))
            let path = directory.stylePath(id)
            guard Catalog.isValidStyleID(id), let identity = FileIdentity(path: path) else { continue }
            if let style = known[id], style.file == identity {
                styles[id] = style
                continue
            }
            guard identity.size <= StyleBundle.maximumSize else {
                damaged[id] = L.localized("it is %1$s bytes, more than a style may be (%2$s)", "\(identity.size)", "\(StyleBundle.maximumSize)")
                continue
            }
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                styles[id] = Style(bundle: try StyleBundle.decode(data, expectedID: id), file: identity)
            } catch {
                damaged[id] = errorMessage(error)
            }
        }
        return (styles, damaged)
    }

    /// Reads the installed regions' facts from their files: those that can be served, and the
    /// damaged ones with the reason.
    public static func loadRegions(from library: RegionLibrary) throws -> (regions: [Region], damaged: [Damage]) {
        var regions: [Region] = []
        var damaged: [Damage] = []
        for record in try library.installed() {
            do { regions.append(try loadRegion(record, path: library.directory.regionPath(record.id), recordingStampIn: library)) } catch {
                damaged.append(Damage(id: record.id, reason: errorMessage(error)))
            }
        }
        return (regions, damaged)
    }

    /// A region's facts from its file; throws when the file is missing, cut short or not an
    /// MBTiles file SQLite can read. A file found intact under a new stamp (hashed) has the stamp
    /// recorded in `library`, so that the next start does not hash it again.
    static func loadRegion(_ record: InstalledRegion, path: String, recordingStampIn library: RegionLibrary? = nil) throws -> Region {
        guard FileIdentity(path: path) != nil else {
            throw RegionError(region: record.id, reason: L.localized("its file %1$s cannot be read: %2$s", "\(path)", "\(SystemErrorReason.text(errno))"), kind: .io)
        }
        // Held open from here on: what is checked is what the workers open (``HeldFile``).
        let held: HeldFile
        do {
            held = try HeldFile(path: path)
        } catch {
            throw RegionError(region: record.id, reason: "\(path) \(error.reason)", kind: error.kind)
        }
        // The file is the one installed, by the rule `list`, `tile` and `verify` follow (its size,
        // then its stamp, then its SHA-256), before SQLite opens it (found by an attack: a FIFO put
        // in its place blocked the watcher's open for good, and a server started beside one never
        // answered; a file edited in place was served as "updated").
        switch try record.condition(ofFileAt: path, readingFrom: held.openablePath) {
        case .damaged(let reason): throw RegionError(region: record.id, reason: reason, kind: .badData)
        case .intactWithNewStamp(let stamp): library?.recordStamp(stamp, of: record)
        case .intact: break
        }
        let file = try MBTilesFile(path: path, openingThrough: held.openablePath)
        // Metadata that cannot be read is a damaged file (500 with the reason), not one served with
        // made-up facts (issue 43: a quiet `try?`); a zoom range the metadata contradicts falls
        // back to the record's, and absent or malformed bounds to the record's, then the world.
        let metadata = try file.metadata()
        let zoom = (try? file.zoomRange()) ?? nil
        let minzoom = zoom?.lowerBound ?? record.minzoom ?? 0
        let maxzoom = zoom?.upperBound ?? record.maxzoom ?? TileCoordinate.defaultMaximumZoom
        let bounds = metadata["bounds"].flatMap(MBTilesFile.parseBounds) ?? record.bounds ?? TileCoordinate.worldBounds
        let center = MBTilesFile.center(metadata["center"], within: bounds, zoom: min(minzoom, maxzoom)...max(minzoom, maxzoom))
            ?? { let middle = MBTilesFile.middle(of: bounds); return [middle.longitude, middle.latitude, Double(minzoom)] }()
        var vectorLayers: String?
        if record.format == .pbf, let json = metadata["json"],
            let object = try? JSONValue(parsing: Data(json.utf8)), let layers = object["vector_layers"],
            let data = try? layers.encoded([.sortedKeys])
        {
            vectorLayers = String(decoding: data, as: UTF8.self)
        }
        return Region(
            record: record, path: path, file: held.identity, held: held, name: record.name, attribution: metadata["attribution"],
            description: metadata["description"], bounds: bounds, center: center, minzoom: minzoom, maxzoom: maxzoom,
            vectorLayersJSON: vectorLayers, metadataJSON: metadata["json"], tileSize: tileSize(metadata))
    }

    /// `tileSize` (or `tilesize`, `tile_size`) of the metadata when a power of two from 64 to 4096.
    static func tileSize(_ metadata: [String: String]) -> Int {
        for key in ["tileSize", "tilesize", "tile_size"] {
            if let size = metadata[key].flatMap({ Int($0.trimmingWhitespace()) }), (64...4096).contains(size), size & (size - 1) == 0 { return size }
        }
        return 256
    }
}
