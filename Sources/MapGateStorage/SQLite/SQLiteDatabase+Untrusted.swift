import CSQLite

extension SQLiteDatabase {
    /// Makes this connection fit to write into files that came from outside (a region's file, a
    /// delta): their triggers never fire (an `AFTER INSERT` trigger could write anything, or loop
    /// forever), SQL functions used by their schema are not trusted, and defensive mode forbids
    /// writing the schema or the file's pages directly.
    package func distrustSchema() throws {
        let options: [(Int32, Int32)] = [(SQLITE_DBCONFIG_ENABLE_TRIGGER, 0), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0), (SQLITE_DBCONFIG_DEFENSIVE, 1)]
        for (option, value) in options {
            try check(csqlite_db_config_int(connection, option, value), sql: nil)
        }
    }
}
