#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a destructor pointer; Swift cannot import it.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_db_config is variadic; Swift cannot call it. Sets an integer option (ENABLE_TRIGGER,
// TRUSTED_SCHEMA, DEFENSIVE, ...) without reading the old value back.
static inline int csqlite_db_config_int(sqlite3 *db, int option, int value) { return sqlite3_db_config(db, option, value, (int *)0); }

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// The unix VFS's open(2), made so that no file SQLite opens can block the thread: a FIFO put
// where a database was (found by an attack on the server: a worker's open waited for a writer for
// good, then every worker, and SIGTERM with them) or a device. Opened with O_NONBLOCK, which a
// regular file ignores; anything but a regular file or a folder (SQLite opens folders to fsync
// them) is refused as ENXIO. Blocking mode is restored for what SQLite keeps.
static int csqlite_open_nonblocking(const char *path, int flags, int mode) {
    int fd = open(path, flags | O_NONBLOCK, mode);
    if (fd < 0) return fd;
    struct stat info;
    // (SQLite reads its seed from /dev/urandom, a character device: that one is let through.)
    int seed = strcmp(path, "/dev/urandom") == 0;
    if (fstat(fd, &info) != 0 || !(S_ISREG(info.st_mode) || S_ISDIR(info.st_mode) || (seed && S_ISCHR(info.st_mode)))) {
        close(fd);
        errno = ENXIO;
        return -1;
    }
    if (!(flags & O_NONBLOCK)) {
        int now = fcntl(fd, F_GETFL);
        if (now >= 0) fcntl(fd, F_SETFL, now & ~O_NONBLOCK);
    }
    return fd;
}

// Puts csqlite_open_nonblocking in place of the unix VFS's open(2), before any database is
// opened (the caller does it once). SQLITE_OK, or SQLite's error.
static inline int csqlite_open_without_blocking(void) {
    sqlite3_vfs *vfs = sqlite3_vfs_find("unix");
    if (!vfs || vfs->iVersion < 3 || !vfs->xSetSystemCall) return SQLITE_ERROR;
    return vfs->xSetSystemCall(vfs, "open", (sqlite3_syscall_ptr)csqlite_open_nonblocking);
}

// Reads the first `count` bytes of a connection's main database file through SQLite's own open
// file (SQLITE_FCNTL_FILE_POINTER), never a descriptor of one's own: closing any descriptor of a
// file drops every POSIX lock the process holds on it, its SQLite connections' included
// (sqlite.org/howtocorrupt.html, 2.2). SQLITE_OK, or SQLite's error (a short read included).
static inline int csqlite_read_main_file(sqlite3 *db, void *buffer, int count) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods) return SQLITE_ERROR;
    return file->pMethods->xRead(file, buffer, count, 0);
}
