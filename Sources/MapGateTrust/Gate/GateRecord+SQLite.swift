import FoundationEssentials
import MapGateStorage

extension GateRecord {
    /// How one copy of the gate's record read.
    enum Loaded {
        /// A record whose seal matches.
        case sealed(GateRecord)
        /// No sealed record: the row is missing, empty, unsealed (a database from before seals, or
        /// one made by hand), sealed under an older seal, or its seal does not match: the row was
        /// made or edited outside this mapgate. Never trusted.
        case tampered
    }

    /// Reads the gate row of one state database and checks its seal.
    static func load(from database: SQLiteDatabase) throws -> Loaded {
        let sql = """
            SELECT pending_version, first_seen, prompts_shown, latest_clock, last_release,
                   last_lookup_at, last_attempt_at, last_lookup_error, recovering, generation, seal,
                   catalog_serial, catalog_sha256, publisher_gate,
                   installed_regions, uses_since_lookup, last_use_reading, catalog_serials, boot_id, boot_seconds, not_newer_since,
                   reservations, strictest_rules, first_use_at, counting_for
            FROM gate WHERE id = 1
            """
        /// A nested value whose stored text does not decode is not trusted, as an edited row is not:
        /// read as "none", it would silently reset what it remembers (the catalog serials).
        var undecodable = false
        func decode<Value: Decodable>(_ type: Value.Type, _ text: String?) -> Value? {
            guard let text else { return nil }
            do {
                return try JSONDecoder().decode(type, from: Data(text.utf8))
            } catch {
                undecodable = true
                return nil
            }
        }
        let rows = try database.query(sql) { row -> (GateRecord, GateRecordSeal.Texts, String?) in
            var record = GateRecord()
            record.pendingVersion = row.text(0)
            record.firstSeen = row.date(1)
            record.promptsShown = row.int(2)
            record.latestClock = row.date(3)
            let release = row.text(4)
            record.lastRelease = decode(StoreRelease.self, release)
            record.lastLookupAt = row.date(5)
            record.lastAttemptAt = row.date(6)
            record.lastLookupError = row.text(7)
            record.isRecovering = row.int(8) != 0
            record.generation = row.int64(9)
            let gate = row.text(13)
            // Saved with its signer since issue 35 ({"gate": …, "signedBy": …}); before, the rules alone.
            if let gate, gate.contains(#""gate":"#), let saved = decode(SignedPublisherGate.self, gate) {
                (record.publisherGate, record.publisherGateSigner) = (saved.gate, saved.signedBy)
            } else {
                record.publisherGate = decode(PublisherGate.self, gate)
            }
            record.installedRegions = (row.text(14) ?? "").split(separator: ",").map(String.init)
            record.usesSinceLookup = row.int(15)
            record.lastUseReading = row.date(16)
            let serials = row.text(17)
            record.catalogSerials = decode([String: CatalogSerial].self, serials) ?? [:]
            record.bootID = row.text(18)
            record.bootSeconds = row.isNull(19) ? nil : row.double(19)
            record.notNewerSince = row.date(20)
            let reservations = row.text(21)
            record.reservations = decode([Reservation].self, reservations) ?? []
            let strictest = row.text(22)
            record.strictestRules = decode(PublisherGate.self, strictest)
            record.firstUseAt = row.date(23)
            record.countingFor = row.text(24)
            let texts = GateRecordSeal.Texts(
                release: release, publisherGate: gate, catalogSerials: serials, reservations: reservations, strictestRules: strictest)
            return (record, texts, row.text(10))
        }
        // A seal libcrypto cannot compute is an error (the gate fails closed for this run), not
        // a tampered record (which would cost the user the record).
        guard let (sealed, texts, seal) = rows.first, !undecodable, let seal, !seal.isEmpty, seal == (try GateRecordSeal.seal(sealed, texts)),
            sealed.isPlausible
        else { return .tampered }
        var record = sealed
        record.servingDays = try SideTable.servingDays.load([ServingDay].self, from: database, generation: record.generation) ?? []
        record.recentDeliveries = try SideTable.deliveries.load([String].self, from: database, generation: record.generation) ?? []
        return record.isPlausible ? .sealed(record) : .tampered
    }

    /// Writes the record with its seal.
    func save(to database: SQLiteDatabase) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let release = try lastRelease.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let gate = try publisherGate.map { String(decoding: try encoder.encode(SignedPublisherGate(gate: $0, signedBy: publisherGateSigner)), as: UTF8.self) }
        let serials = String(decoding: try encoder.encode(catalogSerials), as: UTF8.self)
        // None is stored as NULL (as before reservations were kept), so a record without them seals as it did.
        let reservations = try reservations.isEmpty ? nil : String(decoding: encoder.encode(reservations), as: UTF8.self)
        let strictest = try strictestRules.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let texts = GateRecordSeal.Texts(
            release: release, publisherGate: gate, catalogSerials: serials, reservations: reservations, strictestRules: strictest)
        try database.execute(
            """
            INSERT OR REPLACE INTO gate (id, pending_version, first_seen, prompts_shown, latest_clock,
                last_release, last_lookup_at, last_attempt_at, last_lookup_error, recovering, generation, seal,
                publisher_gate, installed_regions, uses_since_lookup, last_use_reading, catalog_serials, boot_id, boot_seconds, not_newer_since,
                reservations, strictest_rules, first_use_at, counting_for)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .textOrNull(pendingVersion), .dateOrNull(firstSeen), .integer(Int64(promptsShown)),
                .dateOrNull(latestClock), .textOrNull(release), .dateOrNull(lastLookupAt),
                .dateOrNull(lastAttemptAt), .textOrNull(lastLookupError), .integer(isRecovering ? 1 : 0),
                .integer(generation), .text(try GateRecordSeal.seal(self, texts)),
                .textOrNull(gate),
                .text(installedRegions.joined(separator: ",")), .integer(Int64(usesSinceLookup)), .dateOrNull(lastUseReading), .text(serials),
                .textOrNull(bootID), bootSeconds.map { .real($0) } ?? .null, .dateOrNull(notNewerSince),
                .textOrNull(reservations), .textOrNull(strictest), .dateOrNull(firstUseAt), .textOrNull(countingFor),
            ])
        try SideTable.servingDays.save(servingDays.isEmpty ? nil : servingDays, generation: generation, to: database)
        try SideTable.deliveries.save(recentDeliveries.isEmpty ? nil : recentDeliveries, generation: generation, to: database)
    }
}

/// A value kept beside the gate's row, under a seal of its own tied to the row's generation, so
/// that a mapgate from before it still reads the row as sealed (and what that mapgate saves, a new
/// generation, leaves it unsealed for the row: read as none). One row of `table`, the value's JSON
/// text in `column`: ``GateRecord/servingDays``, ``GateRecord/recentDeliveries``.
private struct SideTable: Sendable {
    let table: String
    let column: String
    /// Its `CREATE TABLE IF NOT EXISTS`: made again by a save that finds it gone (dropped by hand).
    let create: String
    let seal: @Sendable (String, Int64) throws -> String

    static let servingDays = SideTable(
        table: "serving_days", column: "days", create: StateDatabase.servingDaysTable, seal: { try GateRecordSeal.sealServingDays($0, generation: $1) })
    static let deliveries = SideTable(
        table: "gate_deliveries", column: "reservations", create: StateDatabase.deliveriesTable, seal: { try GateRecordSeal.sealDeliveries($0, generation: $1) })

    /// The value saved beside the row of `generation`: nil when there is none, when it was saved
    /// with another generation, when its seal does not match or its text does not decode, or when
    /// its table is gone (found by an attack: every gated command then failed with "no such
    /// table"). Throws only when the seal cannot be computed.
    func load<Value: Decodable>(_ type: Value.Type, from database: SQLiteDatabase, generation: Int64) throws -> Value? {
        let rows = (try? database.query("SELECT \(column), generation, seal FROM \(table) WHERE id = 1") { row in
            (row.text(0) ?? "", row.int64(1), row.text(2) ?? "")
        }) ?? []
        guard let (text, saved, seal) = rows.first, saved == generation, seal == (try self.seal(text, generation)) else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// Saves `value` beside the row of `generation`, or removes what was there when it is nil.
    func save<Value: Encodable>(_ value: Value?, generation: Int64, to database: SQLiteDatabase) throws {
        try database.execute(create)
        guard let value else {
            try database.execute("DELETE FROM \(table)")
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        try database.execute(
            "INSERT OR REPLACE INTO \(table) (id, \(column), generation, seal) VALUES (1, ?, ?, ?)",
            [.text(text), .integer(generation), .text(try seal(text, generation))])
    }
}

extension SQLiteValue {
    package static func textOrNull(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    package static func dateOrNull(_ value: Date?) -> SQLiteValue { value.map { .real($0.timeIntervalSince1970) } ?? .null }
}

extension SQLiteStatement {
    package func date(_ column: Int32) -> Date? {
        isNull(column) ? nil : Date(timeIntervalSince1970: double(column))
    }
}

/// A catalog's gate rules as the record keeps them: with the key that signed them.
struct SignedPublisherGate: Codable {
    var gate: PublisherGate
    var signedBy: String?
}
