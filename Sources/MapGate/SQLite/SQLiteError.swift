import CSQLite
import Foundation

/// A failed SQLite call: the extended result code, SQLite's message and the SQL that ran.
public struct SQLiteError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// The extended result code (`SQLITE_CORRUPT`, `SQLITE_BUSY_SNAPSHOT`, …).
    public let code: Int32
    public let message: String
    public let sql: String?
    /// The database file, when known.
    public let path: String?

    public init(code: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether the file is damaged or not a database at all.
    public var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var kind: FailureKind { isCorruption ? .badData : .io }

    public var errorDescription: String? {
        var text = "SQLite error \(code)"
        if let path { text += " in \(path)" }
        text += ": \(message)"
        if let sql { text += " (while running: \(sql))" }
        return text
    }
}
