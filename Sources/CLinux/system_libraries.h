// Where mapgate opens the libraries it loads with dlopen (libcurl, libmicrohttpd, FreeType,
// libcrypto): the system's own library folder, by absolute path, as a program that must not be
// tricked does. A bare name would be looked up through LD_LIBRARY_PATH first, so a junk
// libcurl.so.4 of the user's own made every store lookup fail "as if offline" (issue 25).
// Debian's multiarch folder for the architecture being built; included by each shim.
#if defined(__x86_64__)
#define MAPGATE_SYSTEM_LIBRARY_FOLDER "/usr/lib/x86_64-linux-gnu/"
#elif defined(__aarch64__)
#define MAPGATE_SYSTEM_LIBRARY_FOLDER "/usr/lib/aarch64-linux-gnu/"
#else
#error "mapgate does not know this architecture's system library folder (Debian multiarch)"
#endif
