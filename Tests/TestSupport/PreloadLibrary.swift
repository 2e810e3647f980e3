import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A library a hostile user preloads (`LD_PRELOAD`) into mapgate, compiled for the test with gcc:
/// glibc's `syscall()` replaced so that `CLOCK_BOOTTIME` reads 1000 s for ever (issue 35, item 5),
/// and, with `failingLinkat`, `linkat()` failing with EACCES (a `tile -o` that never lands).
/// ``compileSlowServerStop(in:)`` makes another: every `pthread_join` slowed;
/// ``compileSlowFileDeletion(in:suffix:)`` one that waits after deleting a file;
/// ``compileFailingRead(in:suffix:)`` one whose reads of a file fail with EIO;
/// ``compileBadSector(in:suffix:offset:)`` one whose reads of a file past an offset do;
/// ``compileFailingFlock(in:)`` one without locks; ``compileLyingWrite(in:suffix:)`` one whose writes lie.
public enum PreloadLibrary {
    /// Compiles the library into `folder` and returns its path (readable and loadable by anyone).
    public static func compile(in folder: String, failingLinkat: Bool = false) throws -> String {
        let source = folder + "/preload.c"
        let linkat = failingLinkat ? "int linkat(int a, const char *b, int c, const char *d, int e) { errno = EACCES; return -1; }\n" : ""
        try ("""
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <stdarg.h>
            #include <sys/syscall.h>
            #include <time.h>

            """ + linkat + """
            long syscall(long n, ...) {
                va_list ap; va_start(ap, n);
                long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
                va_end(ap);
                if (n == SYS_clock_gettime && a == CLOCK_BOOTTIME) { struct timespec *t = (struct timespec *)b; t->tv_sec = 1000; t->tv_nsec = 0; return 0; }
                static long (*real)(long, ...);
                if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
                return real(n, a, b, c, d, e, f);
            }
            """).write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/preload.so")
    }

    /// Compiles into `folder` a library whose `pthread_join` waits 300 ms first: libmicrohttpd
    /// joins its threads as a server stops (it is loaded with `dlopen` and called through `dlsym`,
    /// so its own functions cannot be replaced), which makes that moment as long as on a loaded
    /// machine, long enough for another session to come (what an attack needed minutes of load for).
    public static func compileSlowServerStop(in folder: String) throws -> String {
        let source = folder + "/slow-stop.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <pthread.h>
            #include <unistd.h>

            int pthread_join(pthread_t thread, void **result) {
                static int (*real)(pthread_t, void **);
                if (!real) real = (int (*)(pthread_t, void **))dlsym(RTLD_NEXT, "pthread_join");
                usleep(300000);
                return real(thread, result);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/slow-stop.so")
    }

    /// Compiles into `folder` a library whose `fsync` waits `seconds` first: a slow disk. With
    /// `marker`, each `fsync` first makes that file (a test waits for it to know the wait began).
    public static func compileSlowFsync(in folder: String, seconds: Double = 3, marker: String? = nil) throws -> String {
        let source = folder + "/slow-fsync.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <fcntl.h>
            #include <unistd.h>

            int fsync(int fd) {
                static int (*real)(int);
                if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
                const char *marker = "\(marker ?? "")";
                if (*marker) close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0666));
                usleep(\(Int(seconds * 1_000_000)));
                return real(fd);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/slow-fsync.so")
    }

    /// Compiles into `folder` a library whose `rename` of a file whose path ends in `suffix` waits
    /// `seconds` first: a disk that stalls a rename (a busy journal, a card retrying).
    public static func compileSlowRename(in folder: String, suffix: String, seconds: Double) throws -> String {
        let source = folder + "/slow-rename.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <string.h>
            #include <unistd.h>

            int rename(const char *from, const char *to) {
                static int (*real)(const char *, const char *);
                if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
                size_t n = strlen(from), m = strlen("\(suffix)");
                if (n >= m && strcmp(from + n - m, "\(suffix)") == 0) usleep(\(Int(seconds * 1_000_000)));
                return real(from, to);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/slow-rename.so")
    }

    /// Compiles into `folder` a library that creates a file whose path ends in `suffix` (`open`
    /// with `O_CREAT`) `before` seconds late and then waits `seconds` before it returns: a run
    /// slow to reach a copy (a loaded machine) whose copy takes that long (a large region on a
    /// slow card).
    public static func compileSlowCreation(in folder: String, suffix: String, before: Double = 0.5, seconds: Double = 2) throws -> String {
        let source = folder + "/slow-create.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <fcntl.h>
            #include <stdarg.h>
            #include <string.h>
            #include <unistd.h>

            static int matches(const char *path, int flags) {
                size_t n = strlen(path), m = strlen("\(suffix)");
                return (flags & O_CREAT) && n >= m && strcmp(path + n - m, "\(suffix)") == 0;
            }
            static int slowly(const char *name, const char *path, int flags, mode_t mode) {
                int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
                if (!matches(path, flags)) return real(path, flags, mode);
                usleep(\(Int(before * 1_000_000)));
                int result = real(path, flags, mode);
                if (result >= 0 && \(Int(seconds * 1_000_000)) > 0) usleep(\(Int(seconds * 1_000_000)));
                return result;
            }
            int open(const char *path, int flags, ...) {
                va_list list;
                va_start(list, flags);
                mode_t mode = (flags & O_CREAT) ? va_arg(list, mode_t) : 0;
                va_end(list);
                return slowly("open", path, flags, mode);
            }
            int open64(const char *path, int flags, ...) {
                va_list list;
                va_start(list, flags);
                mode_t mode = (flags & O_CREAT) ? va_arg(list, mode_t) : 0;
                va_end(list);
                return slowly("open64", path, flags, mode);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/slow-create.so")
    }

    /// Compiles into `folder` a library that, after deleting a file whose path ends in `suffix`
    /// (`unlink`, `unlinkat` or `remove`), waits `seconds` before it returns: a writer held
    /// half-way through a change, as a slow disk or a loaded machine would hold it.
    public static func compileSlowFileDeletion(in folder: String, suffix: String, seconds: Double = 2) throws -> String {
        let source = folder + "/slow-delete.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>

            static void pause_after(const char *path) {
                size_t n = strlen(path), m = strlen("\(suffix)");
                if (n >= m && strcmp(path + n - m, "\(suffix)") == 0) usleep(\(Int(seconds * 1_000_000)));
            }
            int unlink(const char *path) {
                static int (*real)(const char *);
                if (!real) real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
                int result = real(path);
                if (result == 0) pause_after(path);
                return result;
            }
            int unlinkat(int dir, const char *path, int flags) {
                static int (*real)(int, const char *, int);
                if (!real) real = (int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
                int result = real(dir, path, flags);
                if (result == 0) pause_after(path);
                return result;
            }
            int remove(const char *path) {
                static int (*real)(const char *);
                if (!real) real = (int (*)(const char *))dlsym(RTLD_NEXT, "remove");
                int result = real(path);
                if (result == 0) pause_after(path);
                return result;
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/slow-delete.so")
    }

    /// Compiles into `folder` a library whose `read` fails with EIO on a file whose path ends in
    /// `suffix`: a failing drive.
    public static func compileFailingRead(in folder: String, suffix: String) throws -> String {
        let source = folder + "/failing-read.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>

            ssize_t read(int fd, void *buffer, size_t count) {
                static ssize_t (*real)(int, void *, size_t);
                if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
                char link[64], path[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof path - 1);
                size_t m = strlen("\(suffix)");
                if (n >= (ssize_t)m && memcmp(path + n - m, "\(suffix)", m) == 0) {
                    errno = EIO;
                    return -1;
                }
                return real(fd, buffer, count);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/failing-read.so")
    }

    /// Compiles into `folder` a library whose `read`, `pread` and `pread64` fail with EIO on a file
    /// whose path ends in `suffix` when they would read the byte at `offset` or later: a drive
    /// with a bad sector there, which fails every reader, each time. With `sequentialOnly`, only
    /// `read` does (SQLite's page reads, `pread64`, get through; a file's hashing does not). With
    /// `failures`, only that many reads fail in each process, then the sector reads again (a
    /// transient fault: a card's slow retry, a loose contact).
    public static func compileBadSector(in folder: String, suffix: String, offset: Int, sequentialOnly: Bool = false, failures: Int? = nil) throws -> String {
        let name = (sequentialOnly ? "/bad-sector-read" : "/bad-sector") + (failures.map { "-\($0)" } ?? "")
        let source = folder + name + ".c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <stdio.h>
            #include <string.h>
            #include <unistd.h>

            static int bad(int fd, off_t start, size_t count) {
                char link[64], path[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof path - 1);
                size_t m = strlen("\(suffix)");
                if (!(n >= (ssize_t)m && memcmp(path + n - m, "\(suffix)", m) == 0 && start + (off_t)count > \(offset))) return 0;
                static int failed;
                return \(failures.map { "__atomic_fetch_add(&failed, 1, __ATOMIC_SEQ_CST) < \($0)" } ?? "1");
            }
            ssize_t read(int fd, void *buffer, size_t count) {
                static ssize_t (*real)(int, void *, size_t);
                if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
                if (bad(fd, lseek(fd, 0, SEEK_CUR), count)) { errno = EIO; return -1; }
                return real(fd, buffer, count);
            }
            ssize_t pread64(int fd, void *buffer, size_t count, off_t offset) {
                static ssize_t (*real)(int, void *, size_t, off_t);
                if (!real) real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
                if (\(sequentialOnly ? 0 : 1) && bad(fd, offset, count)) { errno = EIO; return -1; }
                return real(fd, buffer, count, offset);
            }
            ssize_t pread(int fd, void *buffer, size_t count, off_t offset) { return pread64(fd, buffer, count, offset); }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + name + ".so")
    }

    /// Compiles into `folder` a library whose `flock` fails with ENOLCK on a file whose path
    /// starts with `prefix`: a file system without locks (an NFS share whose lock service is not running).
    public static func compileFailingFlock(in folder: String, prefix: String) throws -> String {
        let source = folder + "/failing-flock.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <errno.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/file.h>
            #include <unistd.h>

            int flock(int fd, int operation) {
                static int (*real)(int, int);
                if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
                char link[64], path[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof path - 1);
                size_t m = strlen("\(prefix)");
                if (n >= (ssize_t)m && memcmp(path, "\(prefix)", m) == 0) { errno = ENOLCK; return -1; }
                return real(fd, operation);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/failing-flock.so")
    }

    /// Compiles into `folder` a library whose `write` to a file whose path ends in `suffix` says
    /// it wrote everything but writes only the first half: a file system (or a counterfeit
    /// stick) that lies about writes.
    public static func compileLyingWrite(in folder: String, suffix: String) throws -> String {
        let source = folder + "/lying-write.c"
        try """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/types.h>
            #include <unistd.h>

            ssize_t write(int fd, const void *buffer, size_t count) {
                static ssize_t (*real)(int, const void *, size_t);
                if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
                char link[64], path[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, path, sizeof path - 1);
                size_t m = strlen("\(suffix)");
                if (n >= (ssize_t)m && memcmp(path + n - m, "\(suffix)", m) == 0 && count > 1) return real(fd, buffer, count / 2) < 0 ? -1 : (ssize_t)count;
                return real(fd, buffer, count);
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        return try build(source, into: folder + "/lying-write.so")
    }

    private static func build(_ source: String, into library: String) throws -> String {
        let compiled = try runProcess("/usr/bin/gcc", ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"])
        guard compiled.status == 0 else { throw MissingFixture(path: "a preload library from gcc: \(compiled.stderr)") }
        chmod(library, 0o755)
        return library
    }
}
