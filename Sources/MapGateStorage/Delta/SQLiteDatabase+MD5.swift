import CSQLite
import FoundationEssentials
import MapGateBase

extension SQLiteDatabase {
    /// The name of the SQL function ``registerMD5HexFunction()`` adds.
    static let md5HexFunction = "mapgate_md5_hex"

    /// Adds `mapgate_md5_hex(x)` to this connection: the MD5 of a blob's (or text's) bytes as 32
    /// upper-case hex digits, NULL for NULL; what martin's `md5_hex` gives, for the tile ids of
    /// de-duplicated files.
    func registerMD5HexFunction() throws {
        let code = sqlite3_create_function_v2(
            connection, Self.md5HexFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, values in
                guard let context else { return }
                guard count == 1, let values, let value = values[0] else {
                    sqlite3_result_error(context, "mapgate_md5_hex takes one argument", -1)
                    return
                }
                if sqlite3_value_type(value) == SQLITE_NULL {
                    sqlite3_result_null(context)
                    return
                }
                // sqlite3_value_blob first, then sqlite3_value_bytes: the documented order.
                let pointer = sqlite3_value_blob(value)
                let count = Int(sqlite3_value_bytes(value))
                do {
                    let hex = try MD5Hasher.hex(of: UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: count))
                    sqlite3_result_text(context, hex, -1, csqlite_transient())
                } catch {
                    sqlite3_result_error(context, errorMessage(error), -1)
                }
            }, nil, nil, nil)
        try check(code, sql: nil)
    }
}
