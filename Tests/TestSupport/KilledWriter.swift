import Foundation

/// A writer of a SQLite file killed in the middle of a change (SIGKILL, as a power cut would stop
/// it): it leaves a hot journal beside the file, which only a connection that may write can undo.
public enum KilledWriter {
    /// Begins a change to the database at `path` in another process (Python's sqlite3) and kills
    /// that process before its commit. Returns whether the journal was there when it was killed
    /// (a running reader may undo it at once after).
    public static func leaveUnfinishedChange(in path: String) throws -> Bool {
        let killed = try runProcess("/usr/bin/python3", ["-c", """
            import os, signal, sqlite3
            db = sqlite3.connect('\(path)', isolation_level=None)
            db.execute('PRAGMA cache_size = 1')
            db.execute('BEGIN IMMEDIATE')
            db.execute('CREATE TABLE junk (x)')
            db.execute('INSERT INTO junk VALUES (randomblob(200000))')
            print('journal' if os.path.exists('\(path)-journal') else 'none', flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
            """])
        return killed.status != 0 && killed.stdout == "journal\n"
    }
}
