import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A library a hostile user preloads (`LD_PRELOAD`) into mapgate, compiled for the test with gcc:
/// glibc's `syscall()` replaced so that `CLOCK_BOOTTIME` reads 1000 s for ever (issue 35, item 5),
/// and, with `failingLinkat`, `linkat()` failing with EACCES (a `tile -o` that never lands).
/// ``compileSlowServerStop(in:)`` makes another: every `pthread_join` slowed.
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
        let library = folder + "/preload.so"
        let compiled = try runProcess("/usr/bin/gcc", ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"])
        guard compiled.status == 0 else { throw MissingFixture(path: "a preload library from gcc: \(compiled.stderr)") }
        chmod(library, 0o755)
        return library
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
        let library = folder + "/slow-stop.so"
        let compiled = try runProcess("/usr/bin/gcc", ["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"])
        guard compiled.status == 0 else { throw MissingFixture(path: "a preload library from gcc: \(compiled.stderr)") }
        chmod(library, 0o755)
        return library
    }
}
