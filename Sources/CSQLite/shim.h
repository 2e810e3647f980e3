#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a destructor pointer; Swift cannot import it.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_db_config is variadic; Swift cannot call it. Sets an integer option (ENABLE_TRIGGER,
// TRUSTED_SCHEMA, DEFENSIVE, ...) without reading the old value back.
static inline int csqlite_db_config_int(sqlite3 *db, int option, int value) { return sqlite3_db_config(db, option, value, (int *)0); }
