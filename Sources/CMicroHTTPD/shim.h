// libmicrohttpd, opened with dlopen the first time a server starts (not linked: it brings gnutls
// and a dozen more libraries, 2.7 ms on every start). Swift calls only the cmhd_* functions
// below, never MHD_*: the binary then has no reference to libmicrohttpd, which the link would
// refuse (no -lmicrohttpd). docs/decisions/dlopen-libraries.md.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <dlfcn.h>
#include "../CLinux/system_libraries.h"
#include <pthread.h>
#include <stdio.h>

// MHD_OPTION_URI_LOG_CALLBACK's callback (microhttpd.h has no name for its type).
typedef void *(*cmhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

struct cmhd_functions {
    // NULL once every function is resolved; else what failed (dlerror's text).
    const char *error;
    struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *, MHD_AccessHandlerCallback, void *, ...);
    void (*stop_daemon)(struct MHD_Daemon *);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
    int (*get_connection_values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
    struct MHD_Response *(*create_response_from_buffer_with_free_callback_cls)(size_t, void *, MHD_ContentReaderFreeCallback, void *);
    struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *, MHD_ContentReaderFreeCallback);
    void (*destroy_response)(struct MHD_Response *);
    enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    MHD_socket (*quiesce_daemon)(struct MHD_Daemon *);
};

// Opens the library and resolves every function once (the first caller does, the others wait).
// Function-local state: each object file that inlines this has its own copy, and each copy
// resolves the same addresses (dlopen counts references).
static inline const struct cmhd_functions *cmhd_functions(void) {
    static struct cmhd_functions f;
    static int done;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char error[512];
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return &f;
    pthread_mutex_lock(&lock);
    if (!done) {
        void *library = dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER "libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
        const char *missing = library ? NULL : dlerror();
#define CMHD_RESOLVE(field, name) \
        if (!missing && !(*(void **)&f.field = dlsym(library, name))) missing = dlerror();
        CMHD_RESOLVE(start_daemon, "MHD_start_daemon")
        CMHD_RESOLVE(stop_daemon, "MHD_stop_daemon")
        CMHD_RESOLVE(get_connection_info, "MHD_get_connection_info")
        CMHD_RESOLVE(get_connection_values, "MHD_get_connection_values")
        CMHD_RESOLVE(create_response_from_buffer_with_free_callback_cls, "MHD_create_response_from_buffer_with_free_callback_cls")
        CMHD_RESOLVE(create_response_from_callback, "MHD_create_response_from_callback")
        CMHD_RESOLVE(destroy_response, "MHD_destroy_response")
        CMHD_RESOLVE(add_response_header, "MHD_add_response_header")
        CMHD_RESOLVE(queue_response, "MHD_queue_response")
        CMHD_RESOLVE(quiesce_daemon, "MHD_quiesce_daemon")
#undef CMHD_RESOLVE
        if (missing) {
            snprintf(error, sizeof error, "%s", missing);
            f.error = error;
        }
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return &f;
}

// NULL when libmicrohttpd is loaded; else why it is not. Call (and check) before any other
// cmhd_*: they call through the resolved pointers without checking them.
static inline const char *cmhd_load_error(void) { return cmhd_functions()->error; }

// MHD_start_daemon is variadic: the callbacks go typed, the other options in an MHD_OPTION_ARRAY
// (which ends with MHD_OPTION_END). Every callback gets `cls`.
static inline struct MHD_Daemon *cmhd_start_daemon(
    unsigned int flags, MHD_AccessHandlerCallback handler, cmhd_uri_log_callback uri_log,
    MHD_NotifyConnectionCallback notify_connection, MHD_RequestCompletedCallback completed, void *cls,
    struct MHD_OptionItem *options) {
    return cmhd_functions()->start_daemon(
        flags, 0, NULL, NULL, handler, cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, cls,
        MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
        MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}
static inline void cmhd_stop_daemon(struct MHD_Daemon *d) { cmhd_functions()->stop_daemon(d); }
// Stops accepting and hands the listening socket back (the caller closes it), so that stopping
// never shuts down a socket another descriptor still listens on.
static inline int cmhd_quiesce_daemon(struct MHD_Daemon *d) { return (int)cmhd_functions()->quiesce_daemon(d); }
static inline const union MHD_ConnectionInfo *cmhd_get_connection_info(struct MHD_Connection *c, enum MHD_ConnectionInfoType t) { return cmhd_functions()->get_connection_info(c, t); }
static inline int cmhd_get_connection_values(struct MHD_Connection *c, enum MHD_ValueKind k, MHD_KeyValueIterator i, void *cls) { return cmhd_functions()->get_connection_values(c, k, i, cls); }
static inline struct MHD_Response *cmhd_create_response_from_buffer_with_free_callback_cls(size_t size, void *buffer, MHD_ContentReaderFreeCallback free_buffer, void *cls) { return cmhd_functions()->create_response_from_buffer_with_free_callback_cls(size, buffer, free_buffer, cls); }
static inline struct MHD_Response *cmhd_create_response_from_callback(uint64_t size, size_t block, MHD_ContentReaderCallback reader, void *cls, MHD_ContentReaderFreeCallback free_reader) { return cmhd_functions()->create_response_from_callback(size, block, reader, cls, free_reader); }
static inline void cmhd_destroy_response(struct MHD_Response *r) { cmhd_functions()->destroy_response(r); }
static inline enum MHD_Result cmhd_add_response_header(struct MHD_Response *r, const char *name, const char *value) { return cmhd_functions()->add_response_header(r, name, value); }
static inline enum MHD_Result cmhd_queue_response(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r) { return cmhd_functions()->queue_response(c, status, r); }
static inline ssize_t cmhd_content_reader_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }
