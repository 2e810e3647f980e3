import CSQLite
import FoundationEssentials
import MapGateBase

/// A value bound to a statement parameter.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// Owns one prepared statement: prepared in `init`, finalized in `deinit`.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let database: SQLiteDatabase
    public let sql: String

    init(database: SQLiteDatabase, sql: String) throws {
        var handle: OpaquePointer?
        try database.check(sqlite3_prepare_v2(database.connection, sql, -1, &handle, nil), sql: sql)
        guard let handle else {
            throw SQLiteError(code: SQLITE_MISUSE, message: L.localized("empty statement"), sql: sql, path: database.path)
        }
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to the parameters 1…n, after a reset.
    public func bind(_ values: [SQLiteValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
            case .real(let number): code = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // With its byte length: a text holding U+0000 is stored whole, not cut there.
                // (utf8CString ends with a NUL, so even "" has an address: SQLite binds NULL for none.)
                let bytes = text.utf8CString
                code = bytes.withUnsafeBufferPointer { sqlite3_bind_text(handle, index, $0.baseAddress, Int32(clamping: $0.count - 1), csqlite_transient()) }
            case .blob(let data):
                code = data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
                }
            }
            try database.check(code, sql: sql)
        }
    }

    /// Binds three integers and a blob to the parameters 1…4, after a reset: ``bind(_:)`` for a
    /// row of many (no array nor `Data` per row; SQLite copies the blob's bytes).
    public func bind(_ first: Int64, _ second: Int64, _ third: Int64, blob: UnsafeRawBufferPointer) throws {
        sqlite3_reset(handle)
        try database.check(sqlite3_bind_int64(handle, 1, first), sql: sql)
        try database.check(sqlite3_bind_int64(handle, 2, second), sql: sql)
        try database.check(sqlite3_bind_int64(handle, 3, third), sql: sql)
        // A blob of no bytes may have no address: SQLite would bind NULL for it, so it gets one.
        let code = blob.baseAddress.map { sqlite3_bind_blob(handle, 4, $0, Int32(clamping: blob.count), csqlite_transient()) }
            ?? sqlite3_bind_zeroblob(handle, 4, 0)
        try database.check(code, sql: sql)
    }

    /// Steps once: `true` when a row is ready, `false` when done.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        try database.check(code, sql: sql)
        return false
    }

    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    public func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        // By its byte length, so a text holding U+0000 is read whole.
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The bytes of a blob column; an empty blob (for which SQLite returns NULL) is empty data.
    public func blob(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// Hands the blob's bytes to `body` without copying them.
    public func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: count))
    }
}
