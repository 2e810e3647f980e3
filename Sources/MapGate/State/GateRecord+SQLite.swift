import Foundation

extension GateRecord {
    /// Reads the gate row of the state database.
    static func load(from database: SQLiteDatabase) throws -> GateRecord {
        let sql = """
            SELECT pending_version, first_seen, prompts_shown, latest_clock, last_release,
                   last_lookup_at, last_attempt_at, last_lookup_error FROM gate WHERE id = 1
            """
        let rows = try database.query(sql) { row -> GateRecord in
            var record = GateRecord()
            record.pendingVersion = row.text(0)
            record.firstSeen = row.date(1)
            record.promptsShown = row.int(2)
            record.latestClock = row.date(3)
            record.lastRelease = row.text(4).flatMap { try? JSONDecoder().decode(StoreRelease.self, from: Data($0.utf8)) }
            record.lastLookupAt = row.date(5)
            record.lastAttemptAt = row.date(6)
            record.lastLookupError = row.text(7)
            return record
        }
        return rows.first ?? GateRecord()
    }

    func save(to database: SQLiteDatabase) throws {
        let release = try lastRelease.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try database.execute(
            """
            INSERT OR REPLACE INTO gate (id, pending_version, first_seen, prompts_shown, latest_clock,
                last_release, last_lookup_at, last_attempt_at, last_lookup_error)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .textOrNull(pendingVersion), .dateOrNull(firstSeen), .integer(Int64(promptsShown)),
                .dateOrNull(latestClock), .textOrNull(release), .dateOrNull(lastLookupAt),
                .dateOrNull(lastAttemptAt), .textOrNull(lastLookupError),
            ])
    }
}

extension SQLiteValue {
    static func textOrNull(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    static func dateOrNull(_ value: Date?) -> SQLiteValue { value.map { .real($0.timeIntervalSince1970) } ?? .null }
}

extension SQLiteStatement {
    func date(_ column: Int32) -> Date? {
        isNull(column) ? nil : Date(timeIntervalSince1970: double(column))
    }
}
