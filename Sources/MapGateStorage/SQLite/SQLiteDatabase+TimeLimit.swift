import CSQLite
import Dispatch
import FoundationEssentials
import MapGateBase

/// The moment past which the statements of one connection are stopped (SQLite's progress handler
/// reads it every few thousand virtual-machine steps).
private final class QueryDeadline {
    var uptimeNanoseconds: UInt64 = .max
}

extension SQLiteDatabase {
    /// The time allowed for one pass over a whole file of `bytes` bytes (hashing its tiles,
    /// applying a delta to it): 30 s, plus 1 s for every 10 MB, as if it were read at 10 MB/s
    /// (a slow SD card; a real pass runs at hundreds of MB/s). Fixed by the size, so a small file
    /// cannot keep mapgate busy for long behind a slow view.
    public static func timeLimit(forPassOver bytes: Int) -> Double {
        30 + Double(max(0, bytes)) / 10_000_000
    }

    /// Runs `body`, stopping any statement of this connection that is still running `seconds`
    /// after the start (`SQLITE_INTERRUPT`), and reports that as a ``SQLiteError`` that says so.
    ///
    /// A file from outside can hide unbounded work behind a view (a recursive CTE of 200 million
    /// rows behind `tiles`): every query on a region's file runs under such a bound.
    public func withTimeLimit<T>(_ seconds: Double, _ body: () throws -> T) throws -> T {
        let deadline = QueryDeadline()
        deadline.uptimeNanoseconds = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        let context = Unmanaged.passUnretained(deadline).toOpaque()
        sqlite3_progress_handler(connection, 4096, { context in
            guard let context else { return 0 }
            let deadline = Unmanaged<QueryDeadline>.fromOpaque(context).takeUnretainedValue()
            return DispatchTime.now().uptimeNanoseconds > deadline.uptimeNanoseconds ? 1 : 0
        }, context)
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        do {
            return try withExtendedLifetime(deadline) { try body() }
        } catch let error as SQLiteError where error.primaryCode == SQLITE_INTERRUPT {
            throw SQLiteError(
                code: error.code, message: L.localized("a query took longer than %1$s s and was stopped", "\(Int(seconds))"), sql: error.sql, path: error.path)
        }
    }
}
